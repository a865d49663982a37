// llama-mtp: llama.cpp's MTP (NextN) draft logits for a prompt, through
// libllama's MTP context the way common/speculative.cpp's draft-mtp drives
// it, so the engine's MTP block can be compared with a real llama.cpp.
//
// The model is loaded with load_mtp. A target context (F32 KV cache, no
// flash attention, embeddings on, no pooling) decodes the ids as one batch;
// its embeddings are the normed hidden states the MTP block reads (the
// qwen35 graph's h_nextn is the output-normed row). An MTP context
// (LLAMA_CONTEXT_TYPE_MTP) then decodes the same ids at the same positions,
// row i with the target's hidden state of row i-1 (row 0: zeros), as
// draft-mtp mirrors every target batch, and finally NEXT at position n with
// the last row's hidden state, with logits: the block's first draft.
//
// Usage: llama-mtp MODEL -i IDS -n NEXT -o LOGITS [-t THREADS]
//   IDS    comma-separated token ids (BOS included)
//   LOGITS float32 little-endian, n_vocab values
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

static struct llama_context *new_context(struct llama_model *model, enum llama_context_type type, bool embd, int threads) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = 512;
    cp.n_ubatch = 512;
    cp.n_seq_max = 1;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    cp.ctx_type = type;
    cp.embeddings = embd;
    cp.pooling_type = LLAMA_POOLING_TYPE_NONE;
    return llama_init_from_model(model, cp);
}

// mtp_add adds token id at position pos with hidden state h to b.
static int mtp_add(struct llama_batch_ext *b, llama_token id, llama_pos pos, const float *h, int32_t n_embd, bool out) {
    int32_t idx = llama_batch_ext_add_token(b, 0, id);
    struct llama_embd e = {h, 1, (size_t)n_embd};
    if (idx < 0 || !llama_batch_ext_set_pos(b, idx, &pos) || !llama_batch_ext_set_embd_state(b, idx, e) ||
        !llama_batch_ext_set_output_logits(b, idx, out)) {
        fprintf(stderr, "cannot add token %d at %d to the MTP batch\n", id, pos);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *ids_arg = NULL, *out = NULL;
    int threads = 2, next = -1;
    for (int i = 1; i < argc; i++) {
        bool more = i + 1 < argc;
        if (!strcmp(argv[i], "-i") && more) {
            ids_arg = argv[++i];
        } else if (!strcmp(argv[i], "-n") && more) {
            next = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-o") && more) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "-t") && more) {
            threads = atoi(argv[++i]);
        } else if (argv[i][0] == '-' || model_path) {
            fprintf(stderr, "usage: llama-mtp MODEL -i IDS -n NEXT -o LOGITS [-t THREADS]\n");
            return 2;
        } else {
            model_path = argv[i];
        }
    }
    if (!model_path || !ids_arg || !out || next < 0) {
        fprintf(stderr, "usage: llama-mtp MODEL -i IDS -n NEXT -o LOGITS [-t THREADS]\n");
        return 2;
    }
    llama_token ids[512];
    int32_t n = 0;
    for (const char *p = ids_arg; *p && n < 512;) {
        ids[n++] = (llama_token)strtol(p, (char **)&p, 10);
        if (*p == ',') {
            p++;
        }
    }

    llama_log_set(quiet_log, NULL);
    ggml_backend_load_all();
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.use_extra_bufts = false;
    mp.load_mtp = true;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "%s: cannot load the model\n", model_path);
        return 1;
    }
    int32_t n_embd = llama_model_n_embd(model);
    int32_t n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    struct llama_context *tgt = new_context(model, LLAMA_CONTEXT_TYPE_DEFAULT, true, threads);
    struct llama_context *dft = new_context(model, LLAMA_CONTEXT_TYPE_MTP, false, threads);
    if (!tgt || !dft) {
        fprintf(stderr, "cannot create the contexts\n");
        return 1;
    }
    struct llama_batch b = llama_batch_init(n, 0, 1);
    for (int32_t i = 0; i < n; i++) {
        b.token[i] = ids[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = n;
    if (llama_decode(tgt, b) != 0) {
        fprintf(stderr, "target llama_decode failed\n");
        return 1;
    }
    llama_batch_free(b);
    float *h = calloc((size_t)(n + 1) * (size_t)n_embd, sizeof(float)); // row 0: zeros, row i+1: target row i
    for (int32_t i = 0; i < n; i++) {
        const float *e = llama_get_embeddings_ith(tgt, i);
        if (!e) {
            fprintf(stderr, "no embeddings for row %d\n", i);
            return 1;
        }
        memcpy(h + (size_t)(i + 1) * n_embd, e, sizeof(float) * (size_t)n_embd);
    }
    struct llama_batch_ext *mb = llama_batch_ext_init(dft);
    for (int32_t i = 0; i < n; i++) {
        if (mtp_add(mb, ids[i], i, h + (size_t)i * n_embd, n_embd, false)) {
            return 1;
        }
    }
    if (llama_process(dft, LLAMA_PROCESS_TYPE_DECODE, mb) != 0) {
        fprintf(stderr, "MTP mirror decode failed\n");
        return 1;
    }
    llama_batch_ext_clear(mb);
    if (mtp_add(mb, next, n, h + (size_t)n * n_embd, n_embd, true) ||
        llama_process(dft, LLAMA_PROCESS_TYPE_DECODE, mb) != 0) {
        fprintf(stderr, "MTP draft decode failed\n");
        return 1;
    }
    const float *l = llama_get_logits_ith(dft, 0);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(l, sizeof(float), (size_t)n_vocab, f) != (size_t)n_vocab || fclose(f) != 0) {
        perror(out);
        return 1;
    }
    llama_batch_ext_free(mb);
    free(h);
    llama_free(dft);
    llama_free(tgt);
    llama_model_free(model);
    return 0;
}
