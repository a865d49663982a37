// Package mtpfixture writes the test cases of adding an MTP block to a
// model (`gguf build --add-mtp`): a qwen35 model without its block, a
// Qwen3.5-style safetensors checkpoint of the block and the file llama.cpp's
// converter would write. It is apart from package fixture because it
// quantizes (package quant), whose own tests use fixture.
package mtpfixture
