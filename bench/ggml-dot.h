// ggml-dot.h: one ggml-cpu backend's vec_dot kernel, loaded for the C
// harnesses that call it (ggml-vecdot.c, icount-ggml.c).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

// vec_dot_t is ggml-cpu's ggml_vec_dot_<type>_<vec_dot_type>.
typedef void (*vec_dot_t)(int n, float *s, size_t bs, const void *vx, size_t bx,
                          const void *vy, size_t by, int nrc);

// ggml_dot_open dlopens the backend library and returns its kernel
// symbol, after ggml_cpu_init has set up the backend's tables (f16
// conversion and others); on failure it prints why and exits 1.
static vec_dot_t ggml_dot_open(const char *lib, const char *symbol) {
    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        exit(1);
    }
    void (*cpu_init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init");
    vec_dot_t dot = (vec_dot_t)dlsym(h, symbol);
    if (!cpu_init || !dot) {
        fprintf(stderr, "%s: no ggml_cpu_init or %s\n", lib, symbol);
        exit(1);
    }
    cpu_init();
    return dot;
}
