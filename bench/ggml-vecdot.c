// ggml-vecdot: one ggml-cpu backend's own vec_dot kernel on given bytes,
// to check the engine's assembly kernels against it bit for bit
// (engine/kernels_haswell_test.go; bench/ggml-vecdot.sh drives it).
//
// The backend library (e.g. libggml-cpu-haswell.so) is dlopen'ed and its
// ggml_vec_dot_<type>_q8_K (or _q8_0) called once per row pair: weight row r of W
// (ROWBYTES bytes) with activation row r of A (A's size / rows bytes).
// Prints one line per row: the float32 result as 8 hex digits of its bits.
//
// Usage: ggml-vecdot BACKEND.so SYMBOL N ROWBYTES W A
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-dot.h"


static char *slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*len);
    if (!b || fread(b, 1, *len, f) != (size_t)*len) {
        fprintf(stderr, "%s: short read\n", path);
        exit(1);
    }
    fclose(f);
    return b;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: ggml-vecdot BACKEND.so SYMBOL N ROWBYTES W A\n");
        return 2;
    }
    vec_dot_t dot = ggml_dot_open(argv[1], argv[2]);
    int n = atoi(argv[3]);
    long rb = atol(argv[4]), wl, al;
    char *w = slurp(argv[5], &wl), *a = slurp(argv[6], &al);
    long rows = wl / rb;
    if (rows == 0 || wl % rb != 0 || al % rows != 0) {
        fprintf(stderr, "%s and %s do not hold whole rows\n", argv[5], argv[6]);
        return 1;
    }
    long ab = al / rows;
    for (long r = 0; r < rows; r++) {
        float s;
        unsigned u;
        dot(n, &s, 0, w + r * rb, 0, a + r * ab, 0, 1);
        memcpy(&u, &s, 4);
        printf("%08x\n", u);
    }
    return 0;
}
