package inspect

import "testing"

func TestRole(t *testing.T) {
	for name, want := range map[string]string{
		"token_embd.weight":          RoleTokenEmbedding,
		"output.weight":              RoleOutputHead,
		"output_ids.weight":          RoleOutputHead,
		"output_norm.weight":         RoleNorms,
		"blk.0.attn_norm.weight":     RoleNorms,
		"blk.0.attn_q_norm.weight":   RoleNorms,
		"blk.7.attn_q.weight":        RoleAttention,
		"blk.7.attn_output.bias":     RoleAttention,
		"blk.2.ffn_up.weight":        RoleFFN,
		"blk.2.ffn_gate_inp.weight":  RoleFFN,
		"blk.2.ffn_down_exps.weight": RoleExperts,
		"rope_freqs.weight":          RoleOther,
		"mtp.0.eh_proj.weight":       RoleOther,
	} {
		if got := Role(name); got != want {
			t.Errorf("Role(%q) = %s, want %s", name, got, want)
		}
	}
	if Layer("blk.12.ffn_up.weight") != 12 || Layer("output.weight") != -1 {
		t.Error("Layer")
	}
	if FileTypeName(15) != "MOSTLY_Q4_K_M" || FileTypeName(999) != "unknown(999)" {
		t.Error("FileTypeName")
	}
}
