// llama-unicode-dump: prints what the real llama.cpp's Unicode functions
// (exported by libllama, declared here as libllama defines them) give, for
// vocabselect's TestLlamaCppUnicodeDump to compare its own tables with:
//
//   llama-unicode-dump tables   one line per code point 0..0x11000F:
//                               "cp lower nfd flags" in hex (unicode_tolower,
//                               unicode_cpts_normalize_nfd,
//                               unicode_cpt_flags_from_cpt's low nine bits)
//   llama-unicode-dump utf8     one line per byte string of a set that covers
//                               every lead byte with every second byte:
//                               "hexbytes: cp cp ..." (unicode_cpts_from_utf8)
//
// Built and run by bench/llama-unicode.sh.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

struct llama_cpt_flags {
    uint16_t bits;
};
llama_cpt_flags unicode_cpt_flags_from_cpt(uint32_t cpt);
uint32_t unicode_tolower(uint32_t cpt);
std::vector<uint32_t> unicode_cpts_normalize_nfd(const std::vector<uint32_t> & cpts);
std::vector<uint32_t> unicode_cpts_from_utf8(const std::string & utf8);

static void decode(const std::string & s) {
    for (unsigned char b : s) {
        printf("%02x", b);
    }
    printf(":");
    for (uint32_t c : unicode_cpts_from_utf8(s)) {
        printf(" %x", c);
    }
    printf("\n");
}

int main(int argc, char ** argv) {
    if (argc == 2 && strcmp(argv[1], "tables") == 0) {
        const uint32_t end = 0x110010;
        std::vector<uint32_t> all(end);
        for (uint32_t c = 0; c < end; c++) {
            all[c] = c;
        }
        std::vector<uint32_t> nfd = unicode_cpts_normalize_nfd(all);
        for (uint32_t c = 0; c < end; c++) {
            printf("%x %x %x %x\n", c, unicode_tolower(c), nfd[c], unicode_cpt_flags_from_cpt(c).bits & 0x1ff);
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "utf8") == 0) {
        const int tails[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff};
        for (int b0 = 0x80; b0 < 0x100; b0++) {
            for (int b1 = 0; b1 < 0x100; b1++) {
                for (int t2 : tails) {
                    for (int t3 : tails) {
                        decode(std::string{(char) b0, (char) b1, (char) t2, (char) t3});
                    }
                }
                decode(std::string{(char) b0, (char) b1});
            }
            decode(std::string{(char) b0});
        }
        return 0;
    }
    fprintf(stderr, "usage: llama-unicode-dump tables|utf8\n");
    return 2;
}
