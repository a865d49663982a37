// llama-tokenize-bench: how fast llama.cpp's own tokenizer turns a text file
// into token ids. It loads a GGUF's vocabulary only (vocab_only: no
// weights), reads the whole file, and times the llama_tokenize call alone,
// REPS times over the same text: the first (cold) call and the best one.
// add_special is on (BOS/EOS as the model asks, as llama-tokenize does by
// default), parse_special off unless --parse-special.
//
// Usage: llama-tokenize-bench MODEL.gguf TEXT [-r REPS] [-o IDS] [--no-special] [--parse-special]
//   -o IDS   write the ids of the first call to IDS, one per line
//
// Prints one line:
//   tokens=N bytes=B reps=R cold_s=S best_s=S cold_MBps=X best_MBps=X
//   cold_cpu_s=S best_cpu_s=S cold_cpu_MBps=X best_cpu_MBps=X
// (wall-clock times, then the process CPU time of the same calls: on a
// machine shared with other work the CPU time stays steady where the wall
// clock swings with the load).
// Built and run by bench/llama-tokenize.sh; it needs llama.h (libllama-dev)
// and links against libllama.
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama.h"

static void quiet_log(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *read_file(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0) {
            break;
        }
        n += r;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return NULL;
    }
    *len = (long)n;
    return buf;
}

// tokenize runs llama_tokenize into *toks (capacity *cap), growing the
// buffer when llama.cpp says it needs more (a negative count), and returns
// the token count and the wall-clock and CPU seconds the successful call
// took.
static int32_t tokenize(const struct llama_vocab *vocab, const char *text, int32_t len,
                        llama_token **toks, int32_t *cap, bool add_special, bool parse_special,
                        double *secs, double *cpu) {
    for (;;) {
        double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        int32_t n = llama_tokenize(vocab, text, len, *toks, *cap, add_special, parse_special);
        *cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        *secs = clock_s(CLOCK_MONOTONIC) - t0;
        if (n >= 0) {
            return n;
        }
        if (n == INT32_MIN) {
            fprintf(stderr, "llama_tokenize: token count overflows int32\n");
            exit(1);
        }
        *cap = -n;
        *toks = realloc(*toks, (size_t)*cap * sizeof(llama_token));
    }
}

static void usage(void) {
    fprintf(stderr, "usage: llama-tokenize-bench MODEL.gguf TEXT [-r REPS] [-o IDS] [--no-special] [--parse-special]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *text_path = NULL, *ids_path = NULL;
    int reps = 5;
    bool add_special = true, parse_special = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            ids_path = argv[++i];
        } else if (strcmp(argv[i], "--no-special") == 0) {
            add_special = false;
        } else if (strcmp(argv[i], "--parse-special") == 0) {
            parse_special = true;
        } else if (argv[i][0] == '-') {
            usage();
        } else if (!model_path) {
            model_path = argv[i];
        } else if (!text_path) {
            text_path = argv[i];
        } else {
            usage();
        }
    }
    if (!model_path || !text_path || reps < 1) {
        usage();
    }

    long len = 0;
    char *text = read_file(text_path, &len);
    if (!text) {
        return 1;
    }
    if (len > INT32_MAX) {
        fprintf(stderr, "%s: too long for llama_tokenize\n", text_path);
        return 1;
    }

    llama_log_set(quiet_log, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "%s: llama.cpp could not load the vocabulary\n", model_path);
        return 1;
    }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);

    // No text gives more tokens than bytes, bar the added specials; the
    // grow path in tokenize covers any vocabulary that would.
    int32_t cap = (int32_t)len + 16;
    llama_token *toks = malloc((size_t)cap * sizeof(llama_token));
    double cold = 0, best = 0, cold_cpu = 0, best_cpu = 0;
    int32_t n0 = 0;
    for (int r = 0; r < reps; r++) {
        double secs, cpu;
        int32_t n = tokenize(vocab, text, (int32_t)len, &toks, &cap, add_special, parse_special, &secs, &cpu);
        if (r == 0) {
            n0 = n;
            cold = best = secs;
            cold_cpu = best_cpu = cpu;
            if (ids_path) {
                FILE *f = fopen(ids_path, "w");
                if (!f) {
                    fprintf(stderr, "%s: %s\n", ids_path, strerror(errno));
                    return 1;
                }
                for (int32_t i = 0; i < n; i++) {
                    fprintf(f, "%d\n", toks[i]);
                }
                if (fclose(f) != 0) {
                    fprintf(stderr, "%s: write error\n", ids_path);
                    return 1;
                }
            }
        } else {
            if (n != n0) {
                fprintf(stderr, "llama_tokenize gave %d tokens, then %d\n", n0, n);
                return 1;
            }
            if (secs < best) {
                best = secs;
            }
            if (cpu < best_cpu) {
                best_cpu = cpu;
            }
        }
    }
    double mb = (double)len / 1e6;
    printf("tokens=%d bytes=%ld reps=%d cold_s=%.6f best_s=%.6f cold_MBps=%.2f best_MBps=%.2f"
           " cold_cpu_s=%.6f best_cpu_s=%.6f cold_cpu_MBps=%.2f best_cpu_MBps=%.2f\n",
           n0, len, reps, cold, best, mb / cold, mb / best, cold_cpu, best_cpu, mb / cold_cpu, mb / best_cpu);

    free(toks);
    free(text);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
