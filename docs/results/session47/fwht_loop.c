/* Session 47: the same avx2 fwht calls (rows of 256, 1024, 4096 in a 256 KiB batch,
 * L2-resident), 400 calls x 7 rounds each, linked to one archive or another;
 * counted with `perf stat -e instructions:u` (docs/results/session47/README.md). */
#include <hadamix.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc, char **argv){
  const char *be = argc>1?argv[1]:"avx2";
  int sizes[] = {256, 1024, 4096};
  for (int si=0; si<3; si++){
    int n=sizes[si]; int rows = 65536/n;  /* 256 KiB batch: L2 */
    float *x=aligned_alloc(64,sizeof(float)*n*rows), *y=aligned_alloc(64,sizeof(float)*n*rows);
    for(int i=0;i<n*rows;i++) x[i]=(float)(i%7)-3.0f;
    hmx_tensor tx=hmx_tensor_2d(x,HMX_F32,rows,n), ty=hmx_tensor_2d(y,HMX_F32,rows,n);
    hmx_context c={hmx_backend_find(be),1,0,HMX_TIER_EXACT};
    double best=1e9;
    for(int r=0;r<7;r++){ double t0=now(); for(int k=0;k<400;k++) hmx_fwht(&c,&tx,&ty,1.0f); double t=(now()-t0)/400; if(t<best)best=t; }
    printf("n=%d rows=%d best %.2f us (%.1f ns/row)\n", n, rows, best*1e6, best*1e9/rows);
    free(x); free(y);
  }
  return 0;
}
