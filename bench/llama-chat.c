// llama-chat: llama.cpp's built-in chat templates (llama_chat_apply_template)
// applied to fixed conversations, the reference package chat is tested
// against (chat/testdata/llamacpp; bench/llama-chat.sh builds and runs it).
//
//   llama-chat templates          every built-in template name, each conversation
//   llama-chat detect FILE...     each FILE's text as the template (llama.cpp's
//                                 detection picks the format; a FILE.gguf gives its
//                                 tokenizer.chat_template), conversation "sys"
//   llama-chat tokenize VOCAB     conversation "sys" rendered with VOCAB's (a
//                                 vocab-only GGUF) own template and tokenized as
//                                 llama-cli does: add_special true, parse_special
//                                 true; prints the record, then the ids
//
// Records are "@@ NAME CONV LEN\n" then LEN bytes of rendered prompt and a
// newline; LEN -1 means llama.cpp refused the template.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

// The conversations: "sys" is a system and a user turn, "user" the user
// turn alone (templates that add a default system prompt show it), "multi"
// adds an answer (with spaces around it, which some templates trim) and a
// second user turn.
static const llama_chat_message conv_sys[] = {
    {"system", "You are a helpful assistant."},
    {"user", "Hello! Who are you?"},
};
static const llama_chat_message conv_user[] = {
    {"user", "Hello! Who are you?"},
};
static const llama_chat_message conv_multi[] = {
    {"system", "You are a helpful assistant."},
    {"user", "Hello! Who are you?"},
    {"assistant", "  I am an assistant.  "},
    {"user", "What is 2+2?"},
};

static char buf[1 << 16];

static void render(const char *name, const char *tmpl, const char *conv, const llama_chat_message *msgs, size_t n) {
    int32_t len = llama_chat_apply_template(tmpl, msgs, n, true, buf, sizeof buf);
    if (len < 0 || len > (int32_t)sizeof buf) {
        printf("@@ %s %s -1\n", name, conv);
        return;
    }
    printf("@@ %s %s %d\n", name, conv, len);
    fwrite(buf, 1, (size_t)len, stdout);
    printf("\n");
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    s[n] = 0;
    fclose(f);
    return s;
}

static const char *base(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void quiet(enum ggml_log_level level, const char *text, void *user) {
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        fputs(text, stderr);
    }
}

static struct llama_model *load_vocab(const char *path) {
    static int init;
    if (!init) {
        llama_log_set(quiet, NULL);
        llama_backend_init();
        init = 1;
    }
    struct llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    struct llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) {
        fprintf(stderr, "cannot load %s\n", path);
        exit(1);
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "templates") == 0) {
        const char *names[256];
        int32_t n = llama_chat_builtin_templates(names, 256);
        for (int32_t i = 0; i < n && i < 256; i++) {
            render(names[i], names[i], "sys", conv_sys, 2);
            render(names[i], names[i], "user", conv_user, 1);
            render(names[i], names[i], "multi", conv_multi, 4);
        }
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "detect") == 0) {
        for (int i = 2; i < argc; i++) {
            size_t n = strlen(argv[i]);
            if (n > 5 && strcmp(argv[i] + n - 5, ".gguf") == 0) {
                struct llama_model *m = load_vocab(argv[i]);
                const char *t = llama_model_chat_template(m, NULL);
                if (t) {
                    render(base(argv[i]), t, "sys", conv_sys, 2);
                } else {
                    printf("@@ %s sys -1\n", base(argv[i]));
                }
                llama_model_free(m);
                continue;
            }
            char *t = slurp(argv[i]);
            render(base(argv[i]), t, "sys", conv_sys, 2);
            free(t);
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "tokenize") == 0) {
        struct llama_model *m = load_vocab(argv[2]);
        const char *t = llama_model_chat_template(m, NULL);
        if (!t) {
            fprintf(stderr, "%s has no chat template\n", argv[2]);
            return 1;
        }
        render(base(argv[2]), t, "sys", conv_sys, 2);
        int32_t len = llama_chat_apply_template(t, conv_sys, 2, true, buf, sizeof buf - 1);
        if (len < 0) {
            return 1;
        }
        static llama_token ids[1 << 14];
        int32_t n = llama_tokenize(llama_model_get_vocab(m), buf, len, ids, 1 << 14, true, true);
        for (int32_t i = 0; i < n; i++) {
            printf(i ? " %d" : "%d", ids[i]);
        }
        printf("\n");
        llama_model_free(m);
        return 0;
    }
    fprintf(stderr, "usage: llama-chat templates | detect FILE... | tokenize VOCAB.gguf\n");
    return 2;
}
