// icount-ggml: calls one ggml-cpu backend's vec_dot kernel REPS times on
// one row pair of N elements, for bench/icount.sh, which runs it under
// qemu-aarch64 with an instruction trace twice (REPS and 2*REPS) and takes
// the difference of the two counts as REPS row products.
//
// The backend library (e.g. libggml-cpu-armv8.2_1.so) is dlopen'ed and its
// ggml_vec_dot_<type>_<vec_dot_type> called with nrc 1. The rows hold
// pseudo-random bytes (F32 and F16: the same floats in [-1, 1], F16's as
// halves): ggml's kernels take no data-dependent branches, so what they
// count does not depend on the values. Prints the sum of the results so
// the calls cannot be dropped.
//
// Usage: icount-ggml BACKEND.so SYMBOL N WBYTES ABYTES REPS
//   WBYTES, ABYTES: bytes of the weight and the activation row.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-dot.h"


// fill writes len pseudo-random bytes (a 64-bit LCG's high bytes) to p.
static void fill(unsigned char *p, long len, uint64_t seed) {
    for (long i = 0; i < len; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        p[i] = (unsigned char)(seed >> 56);
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: icount-ggml BACKEND.so SYMBOL N WBYTES ABYTES REPS\n");
        return 2;
    }
    vec_dot_t dot = ggml_dot_open(argv[1], argv[2]);
    fprintf(stderr, "%p\n", (void *)dot);
    int n = atoi(argv[3]);
    long wb = atol(argv[4]), ab = atol(argv[5]), reps = atol(argv[6]);
    unsigned char *w = malloc(wb), *a = malloc(ab);
    if (n <= 0 || wb <= 0 || ab <= 0 || reps < 0 || !w || !a) {
        fprintf(stderr, "bad sizes\n");
        return 2;
    }
    if (strstr(argv[2], "_f32")) {
        float *fw = (float *)w, *fa = (float *)a;
        for (int i = 0; i < n; i++) {
            fw[i] = (float)((i * 37 % 201) - 100) / 100.0f;
            fa[i] = (float)((i * 53 % 199) - 99) / 99.0f;
        }
    } else if (strstr(argv[2], "_f16")) {
        __fp16 *hw = (__fp16 *)w, *ha = (__fp16 *)a;
        for (int i = 0; i < n; i++) {
            hw[i] = (__fp16)((float)((i * 37 % 201) - 100) / 100.0f);
            ha[i] = (__fp16)((float)((i * 53 % 199) - 99) / 99.0f);
        }
    } else {
        fill(w, wb, 1);
        fill(a, ab, 2);
    }
    float total = 0;
    for (long r = 0; r < reps; r++) {
        float s = 0;
        dot(n, &s, 0, w, 0, a, 0, 1);
        total += s;
    }
    printf("%g\n", total);
    return 0;
}
