// llama-logits: llama.cpp's logits for a prompt, and optionally its
// perplexity over a text, computed through libllama the way the reference
// data of refdata/synthetic was made (README.txt sections 5 and 8), so the
// Go engine can be compared with a real llama.cpp on any model file.
//
// Context: n_ctx 512, n_batch = n_ubatch = 512, K and V cache in F32 (unless
// -ctk/-ctv), flash attention disabled (unless -fa on), no GPU layers, and (unless --repack) the model loaded
// with use_extra_bufts = false, so ggml-cpu multiplies with its plain
// vec_dot kernels instead of repacked weights.
//
// Usage: llama-logits MODEL [-p PROMPT] [-o LOGITS] [-g N] [-t THREADS] [--repack]
//                           [-ub N] [-f TEXT [--ctx N]] [-ctk T] [-ctv T] [-fa on|off]
//   -p PROMPT  tokenized with BOS (add_special true, parse_special false)
//              and decoded as ONE batch with logits for every position
//   -o LOGITS  where to write them: float32 little-endian, position-major
//              (n_tokens x n_vocab)
//   -g N       then continue the prompt greedily for N tokens (argmax of the
//              last logits, one token per llama_decode), printed as
//              "greedy: ID ..."
//   -ub N      the prompt's n_ubatch (default 512): llama.cpp splits the
//              one llama_decode into micro-batches of N (N = 1: every token
//              through the one-token graph, as a recurrent layer's
//              autoregressive path computes it)
//   -f TEXT    also compute the perplexity of TEXT as llama-perplexity does
//              with -c N -b N (n_seq 1): chunks of N tokens, each starting
//              with BOS from an empty cache, scoring positions N/2..N-2
//
//   -ctk T, -ctv T  the K and V cache types: f32 (default), f16, q8_0
//   -fa on|off      flash attention (default off; llama.cpp runs a q8_0 V
//              cache only with it on)
//
// Prints "tokens: ID ..." for the prompt and, with -f,
// "ppl: PPL +/- ERR chunks=C scored=S" on stdout.
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-backend.h"
#include "llama.h"

static void quiet_log(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static char *read_text(const char *path, int32_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: short read\n", path);
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = (int32_t)n;
    return buf;
}

// tokenize returns the tokens of text (BOS added as the vocab asks) in a
// malloc'ed array and their count in *n.
static llama_token *tokenize(const struct llama_vocab *vocab, const char *text, int32_t len, int32_t *n) {
    int32_t cap = len + 8;
    llama_token *toks = malloc(sizeof(llama_token) * (size_t)cap);
    int32_t got = llama_tokenize(vocab, text, len, toks, cap, true, false);
    if (got < 0) {
        cap = -got;
        toks = realloc(toks, sizeof(llama_token) * (size_t)cap);
        got = llama_tokenize(vocab, text, len, toks, cap, true, false);
    }
    if (got < 0) {
        free(toks);
        return NULL;
    }
    *n = got;
    return toks;
}

// The cache types and flash attention of every context (-ctk, -ctv, -fa).
static enum ggml_type type_k = GGML_TYPE_F32, type_v = GGML_TYPE_F32;
static enum llama_flash_attn_type flash_attn = LLAMA_FLASH_ATTN_TYPE_DISABLED;

// cache_type parses a -ctk/-ctv value; -1 for an unknown one.
static int cache_type(const char *s) {
    if (!strcmp(s, "f32")) {
        return GGML_TYPE_F32;
    }
    if (!strcmp(s, "f16")) {
        return GGML_TYPE_F16;
    }
    if (!strcmp(s, "q8_0")) {
        return GGML_TYPE_Q8_0;
    }
    return -1;
}

static struct llama_context *new_context(struct llama_model *model, uint32_t n_ctx, uint32_t n_ubatch, int threads) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_batch = n_ctx;
    cp.n_ubatch = n_ubatch;
    cp.n_seq_max = 1;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.type_k = type_k;
    cp.type_v = type_v;
    cp.flash_attn_type = flash_attn;
    cp.no_perf = true;
    return llama_init_from_model(model, cp);
}

// decode_all evaluates toks[0..n) at positions 0..n-1 of sequence 0 as one
// batch with logits requested for every position.
static int decode_all(struct llama_context *ctx, const llama_token *toks, int32_t n) {
    struct llama_batch b = llama_batch_init(n, 0, 1);
    for (int32_t i = 0; i < n; i++) {
        b.token[i] = toks[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = n;
    int rc = llama_decode(ctx, b);
    llama_batch_free(b);
    return rc;
}

// perplexity follows llama-perplexity's single-sequence loop: chunk c holds
// tokens [c*n_ctx, (c+1)*n_ctx) with its first replaced by BOS, decoded from
// an empty cache; the logits of positions first..n_ctx-2 (first = n_ctx/2)
// score the next token with a float-exp, double-sum log-softmax.
static int perplexity(struct llama_context *ctx, const struct llama_vocab *vocab, const llama_token *toks,
                      int32_t n, int32_t n_ctx) {
    int32_t n_vocab = llama_vocab_n_tokens(vocab);
    int32_t chunks = n / n_ctx, first = n_ctx / 2;
    llama_token *buf = malloc(sizeof(llama_token) * (size_t)n_ctx);
    double nll = 0, nll2 = 0;
    long count = 0;
    for (int32_t c = 0; c < chunks; c++) {
        memcpy(buf, toks + (size_t)c * n_ctx, sizeof(llama_token) * (size_t)n_ctx);
        buf[0] = llama_vocab_bos(vocab);
        llama_memory_clear(llama_get_memory(ctx), true);
        if (decode_all(ctx, buf, n_ctx) != 0) {
            fprintf(stderr, "llama_decode failed on chunk %d\n", c);
            free(buf);
            return 1;
        }
        for (int32_t j = first; j < n_ctx - 1; j++) {
            const float *l = llama_get_logits_ith(ctx, j);
            float mx = l[0];
            for (int32_t v = 1; v < n_vocab; v++) {
                if (l[v] > mx) {
                    mx = l[v];
                }
            }
            double sum = 0;
            for (int32_t v = 0; v < n_vocab; v++) {
                sum += expf(l[v] - mx);
            }
            double lp = (double)(l[toks[(size_t)c * n_ctx + j + 1]] - mx) - log(sum);
            nll += -lp;
            nll2 += lp * lp;
            count++;
        }
    }
    free(buf);
    if (count == 0) {
        fprintf(stderr, "text too short: %d tokens for a context of %d\n", n, n_ctx);
        return 1;
    }
    double mean = nll / (double)count, mean2 = nll2 / (double)count;
    double err = count > 1 ? sqrt((mean2 - mean * mean) / (double)(count - 1)) : 0;
    double ppl = exp(mean);
    printf("ppl: %.4f +/- %.5f chunks=%d scored=%ld\n", ppl, ppl * err, chunks, count);
    return 0;
}

// greedy_ids continues a decoded prompt of n tokens for count tokens, each
// the argmax (lowest id on ties) of the previous position's logits, and
// prints them.
static int greedy_ids(struct llama_context *ctx, int32_t n_vocab, int32_t n, int count) {
    printf("greedy:");
    int32_t last = n - 1;
    for (int i = 0; i < count; i++) {
        const float *l = llama_get_logits_ith(ctx, last);
        llama_token best = 0;
        for (int32_t v = 1; v < n_vocab; v++) {
            if (l[v] > l[best]) {
                best = v;
            }
        }
        printf(" %d", best);
        struct llama_batch b = llama_batch_init(1, 0, 1);
        b.token[0] = best;
        b.pos[0] = n + i;
        b.n_seq_id[0] = 1;
        b.seq_id[0][0] = 0;
        b.logits[0] = 1;
        b.n_tokens = 1;
        int rc = llama_decode(ctx, b);
        llama_batch_free(b);
        if (rc != 0) {
            fprintf(stderr, "llama_decode failed at greedy token %d\n", i);
            return 1;
        }
        last = 0;
    }
    printf("\n");
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: llama-logits MODEL [-p PROMPT] [-o LOGITS] [-g N] [-t THREADS] [--repack] [-ub N] [-f TEXT [--ctx N]] [-ctk T] [-ctv T] [-fa on|off]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *prompt = NULL, *out = NULL, *text_path = NULL;
    int threads = 2, ppl_ctx = 128, greedy = 0, ubatch = 512;
    bool repack = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "-p") && more) {
            prompt = argv[++i];
        } else if (!strcmp(a, "-o") && more) {
            out = argv[++i];
        } else if (!strcmp(a, "-g") && more) {
            greedy = atoi(argv[++i]);
        } else if (!strcmp(a, "-t") && more) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(a, "-f") && more) {
            text_path = argv[++i];
        } else if (!strcmp(a, "-ub") && more) {
            ubatch = atoi(argv[++i]);
        } else if (!strcmp(a, "--ctx") && more) {
            ppl_ctx = atoi(argv[++i]);
        } else if ((!strcmp(a, "-ctk") || !strcmp(a, "-ctv")) && more) {
            int t = cache_type(argv[++i]);
            if (t < 0) {
                usage();
            }
            *(a[3] == 'k' ? &type_k : &type_v) = (enum ggml_type)t;
        } else if (!strcmp(a, "-fa") && more) {
            const char *v = argv[++i];
            if (strcmp(v, "on") && strcmp(v, "off")) {
                usage();
            }
            flash_attn = !strcmp(v, "on") ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
        } else if (!strcmp(a, "--repack")) {
            repack = true;
        } else if (a[0] == '-' || model_path) {
            usage();
        } else {
            model_path = a;
        }
    }
    if (!model_path || (!prompt && !text_path) || (prompt && !out) || threads < 1 || ppl_ctx < 4 || ubatch < 1 || ubatch > 512) {
        usage();
    }

    llama_log_set(quiet_log, NULL);
    ggml_backend_load_all();
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.use_extra_bufts = repack;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "%s: cannot load the model\n", model_path);
        return 1;
    }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);
    int32_t n_vocab = llama_vocab_n_tokens(vocab);
    int rc = 0;

    if (prompt) {
        int32_t n = 0;
        llama_token *toks = tokenize(vocab, prompt, (int32_t)strlen(prompt), &n);
        struct llama_context *ctx = toks && n <= 512 ? new_context(model, 512, (uint32_t)ubatch, threads) : NULL;
        if (!ctx || decode_all(ctx, toks, n) != 0) {
            fprintf(stderr, "cannot evaluate the prompt\n");
            return 1;
        }
        printf("tokens:");
        for (int32_t i = 0; i < n; i++) {
            printf(" %d", toks[i]);
        }
        printf("\n");
        FILE *f = fopen(out, "wb");
        if (!f) {
            perror(out);
            return 1;
        }
        for (int32_t i = 0; i < n; i++) {
            if (fwrite(llama_get_logits_ith(ctx, i), sizeof(float), (size_t)n_vocab, f) != (size_t)n_vocab) {
                perror(out);
                return 1;
            }
        }
        if (fclose(f) != 0) {
            perror(out);
            return 1;
        }
        if (greedy > 0 && greedy_ids(ctx, n_vocab, n, greedy) != 0) {
            return 1;
        }
        llama_free(ctx);
        free(toks);
    }

    if (text_path) {
        int32_t len = 0, n = 0;
        char *text = read_text(text_path, &len);
        llama_token *toks = text ? tokenize(vocab, text, len, &n) : NULL;
        struct llama_context *ctx = toks ? new_context(model, (uint32_t)ppl_ctx, (uint32_t)ppl_ctx, threads) : NULL;
        if (!ctx) {
            fprintf(stderr, "cannot set up the perplexity run\n");
            return 1;
        }
        rc = perplexity(ctx, vocab, toks, n, ppl_ctx);
        llama_free(ctx);
        free(toks);
        free(text);
    }

    llama_model_free(model);
    llama_backend_free();
    return rc;
}
