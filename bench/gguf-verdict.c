// gguf-verdict: what ggml's own GGUF loader says of each file, for
// bench/gguf-verdicts.sh. For every FILE it prints one line:
//
//     NAME ok REWRITE        the loader accepted it; REWRITE is the file
//                            gguf_write_to_file wrote back into OUTDIR (for
//                            files without tensors; "-" for the others)
//     NAME refused           gguf_init_from_file returned NULL
//
// NAME is the file's base name. Build (see bench/gguf-verdicts.sh):
//     gcc -O2 -I$ROOT/usr/include -o gguf-verdict bench/gguf-verdict.c -L$LIB -lggml-base -lggml
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include "ggml.h"
#include "gguf.h"

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gguf-verdict OUTDIR FILE...\n");
        return 2;
    }
    const char *outdir = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *base = strrchr(argv[i], '/');
        base = base ? base + 1 : argv[i];
        // As llama.cpp's model loader calls it: tensors created in a ggml
        // context (no data), which is where duplicate names are caught.
        struct ggml_context *meta = NULL;
        struct gguf_init_params p = { .no_alloc = true, .ctx = &meta };
        struct gguf_context *ctx = gguf_init_from_file(argv[i], p);
        if (!ctx) {
            printf("%s refused\n", base);
            fflush(stdout);
            continue;
        }
        if (gguf_get_n_tensors(ctx) == 0) {
            char out[4096];
            snprintf(out, sizeof out, "%s/%s.ggml", outdir, base);
            if (!gguf_write_to_file(ctx, out, false)) {
                fprintf(stderr, "%s: write failed\n", base);
                return 1;
            }
            printf("%s ok %s\n", base, out);
        } else {
            printf("%s ok -\n", base);
        }
        fflush(stdout);
        gguf_free(ctx);
        ggml_free(meta);
    }
    return 0;
}
