// Package llama2c reads Karpathy's llama2.c checkpoints (the "version 0"
// run.c format of the tinyllamas family: a 7-int32 header then float32
// weights) and tokenizer files (tokenizer.bin, tok512.bin...), and converts
// them to GGUF files that llama.cpp and this repository's engine load.
//
// The conversion follows llama.cpp's convert-llama2c-to-ggml: the same
// tensor names, shapes, order and bytes (llama2.c's RoPE already rotates
// adjacent pairs, llama.cpp's NORM mode, so no weight is permuted), the
// same vocabulary (spaces as U+2581, byte tokens typed BYTE, ids 0-2 as
// <unk> <s> </s>). It differs where that converter is wrong: the context
// length written is the checkpoint's seq_len (the converter writes its own
// default of 128), and the two meaningless u32 0xFFFFFFFF separator and
// padding ids are left out (llama.cpp reads "none" either way).
package llama2c
