//! `pdl_wait_first` per entry of a module with several entries and functions: each entry's own
//! body is read (not a function or entry whose name starts the same), and a wait reached only
//! through a call, or after one, proves nothing.

use kgraph_build::records_from_ptx;

const PTX: &str = r#"
.version 8.8
.target sm_90
.address_size 64
.func k_wait()
{
	griddepcontrol.wait;
	ret;
}
.func (.param .b32 func_retval0) k(.param .b64 k_param_0)
{
	griddepcontrol.wait;
	st.param.b32 [func_retval0+0], 0;
	ret;
}
.visible .entry k_load(.param .u64 k_load_param_0)
{
	.reg .b64 %rd<3>;
	.reg .f32 %f<2>;
	ld.param.u64 %rd1, [k_load_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.f32 %f1, [%rd2];
	griddepcontrol.wait;
	st.global.f32 [%rd2+4], %f1;
	ret;
}
.visible .entry k_first(.param .u64 k_first_param_0)
{
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [k_first_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	griddepcontrol.wait;
	st.global.u32 [%rd2], 0;
	ret;
}
.visible .entry k_calls(.param .u64 k_calls_param_0)
{
	{ // callseq 0, 0
	call.uni k_wait, ();
	} // callseq 0
	griddepcontrol.wait;
	ret;
}
.visible .entry k_first_too(.param .u64 k_first_too_param_0)
{
	.reg .pred %p<2>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [k_first_too_param_0];
	setp.eq.s64 %p1, %rd1, 0;
	@%p1 bra $L__BB4_2;
	griddepcontrol.wait;
$L__BB4_2:
	ret;
}
"#;

#[test]
fn each_entry_is_proven_from_its_own_body() {
    let records = records_from_ptx(PTX);
    let got: Vec<(&str, bool, bool)> =
        records.iter().map(|k| (k.name.as_str(), k.pdl_wait, k.pdl_wait_first)).collect();
    assert_eq!(
        got,
        [("k_load", true, false), ("k_first", true, true), ("k_calls", true, false), ("k_first_too", true, false)]
    );
}

/// ptxas takes a guard written `@ %p1` (with a space): the call after it is still a callee
/// (which `pdl_waits` and `dyn_smem` trust), not hidden behind `%p1` read as the opcode.
#[test]
fn a_guard_with_a_space_still_shows_the_call() {
    let ptx = ".version 8.8\n.target sm_90\n.entry e()\n{\n\t.reg .pred %p<2>;\n\t@ %p1 call.uni ext, ();\n\tret;\n}\n";
    let records = records_from_ptx(ptx);
    assert_eq!(records[0].callees.len(), 1, "{:?}", records[0].callees);
}
