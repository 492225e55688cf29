//! Whether an entry waits on its grid dependency before anything else: the record's
//! `pdl_wait_first`, which lets `graph!`'s memory plan take a PDL edge into the kernel as
//! ordering. A PDL launch may start while the kernel before it still runs; `griddepcontrol.wait`
//! returns once the grids it depends on have completed and their memory is visible. When every
//! thread executes the wait before any instruction that could touch a buffer, nothing the kernel
//! does to memory overlaps those grids.
//!
//! The proof reads the entry's statements from the first, in order, and is conservative: it
//! holds only if an unguarded wait comes before any statement outside a short list of
//! instructions that touch no memory but the kernel's parameters and stay on the straight line.
//! A label (a branch target: code after it may be reached without the statements before it), a
//! guard (`@%p`: the statement may not execute), a branch, call, `ret`, `exit`, any other
//! memory, barrier or unknown instruction, or a directive other than a one-line declaration
//! first ends the proof unproven.

/// What one statement before the wait is to the proof.
#[derive(Debug, PartialEq, Eq)]
enum Statement {
    /// An unguarded `griddepcontrol.wait`: proven.
    Wait,
    /// Touches no memory but the parameters and falls through to the next statement.
    Harmless,
    /// Anything else: unproven.
    Other,
}

/// Whether the body's code (comment-free, `.loc` lines removed, between the entry's braces)
/// reaches an unguarded `griddepcontrol.wait` before any statement that is not
/// [`Statement::Harmless`].
pub(super) fn waits_first(code: &str) -> bool {
    for statement in code.split(';') {
        match classify(statement) {
            Statement::Wait => return true,
            Statement::Harmless => {}
            Statement::Other => return false,
        }
    }
    false
}

/// One `;`-terminated statement (with whatever newline-terminated text came before it: scope
/// braces, labels).
fn classify(statement: &str) -> Statement {
    // Scope braces open and close register scopes (nvcc wraps inline asm and call sequences in
    // them); they change no control flow.
    let s = statement.trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '}');
    if s.is_empty() {
        return Statement::Harmless; // the text after the last `;`
    }
    if s.starts_with('@') || is_label(s) {
        return Statement::Other;
    }
    if s.starts_with('.') {
        return if is_declaration(s) { Statement::Harmless } else { Statement::Other };
    }
    let opcode = s.split(|c: char| c.is_whitespace() || c == '{' || c == '}').next().unwrap_or("");
    match opcode {
        "griddepcontrol.wait" => Statement::Wait,
        "griddepcontrol.launch_dependents" => Statement::Harmless,
        _ if is_harmless(opcode) => Statement::Harmless,
        _ => Statement::Other,
    }
}

/// A one-line register, stack, shared-memory or call-parameter declaration, as nvcc writes them
/// in an entry (`.reg .b32 %r<5>`, `.local .align 8 .b8 __local_depot0[16]`). No other
/// directive is harmless: `.loc` is ended by a newline, not a `;`, and ptxas assembles an
/// instruction after it on the same line (the body's `.loc` filter drops only lines that start
/// with it, so one after a brace reaches this split), and a `.pragma` string may hold a `;`
/// and instruction text (ptxas warns of an unknown pragma and goes on).
fn is_declaration(s: &str) -> bool {
    let keyword = s.split(|c: char| c.is_whitespace()).next().unwrap_or("");
    matches!(keyword, ".reg" | ".local" | ".shared" | ".param") && !s.trim_end().contains(['\n', '\r'])
}

/// `name:` at the start of `s` (`$L__BB0_2:`).
fn is_label(s: &str) -> bool {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || "_$%".contains(c))).unwrap_or(s.len());
    end > 0 && s[end..].trim_start().starts_with(':')
}

/// Instructions that touch no memory but the kernel's parameters and fall through: parameter
/// loads, moves (of registers, special registers and symbol addresses), address conversion
/// (`cvta` converts an address, it reads nothing), and plain integer and float arithmetic,
/// logic and compares.
fn is_harmless(opcode: &str) -> bool {
    const ARITHMETIC: [&str; 25] = [
        "mov", "cvta", "cvt", "add", "sub", "mul", "mad", "mul24", "mad24", "fma", "neg", "abs", "min", "max", "div",
        "rem", "setp", "selp", "set", "slct", "and", "or", "xor", "not", "cnot",
    ];
    let mut parts = opcode.split('.');
    let base = parts.next().unwrap_or("");
    match base {
        "ld" => parts.next() == Some("param"),
        "shl" | "shr" => true,
        _ => ARITHMETIC.contains(&base),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of what nvcc 13 -O3 emits for a model kernel beginning with `kg_pdl_enter()`
    /// (`kernels/model_common.cuh`), comments removed.
    const ENTER: &str = "
	.reg .pred 	%p<12>;
	.reg .b32 	%r<90>;
	.shared .align 4 .b8 _ZZ4tileE1t[1024];
	ld.param.u64 	%rd5, [bce_param_0];
	ld.param.u32 	%r17, [bce_param_3];
	cvta.to.global.u64 	%rd1, %rd5;
	mov.u32 	%r1, %tid.x;

	griddepcontrol.launch_dependents;


	griddepcontrol.wait;

	setp.lt.s32 	%p1, %r17, 1;
	@%p1 bra 	$L__BB0_3;
	ld.global.f32 	%f1, [%rd1];
";

    #[test]
    fn the_models_enter_pattern_waits_first() {
        assert!(waits_first(ENTER));
        let arithmetic = ENTER.replace("mov.u32", "mad.lo.s32 %r2, %r1, %r17, %r1;\n\tshl.b32 %r3, %r2, 2;\n\tmov.u32");
        assert!(waits_first(&arithmetic), "arithmetic before the wait is harmless");
        assert!(waits_first(&format!("{{\n{ENTER}")), "a scope brace is no branch");
        let vectors = ENTER.replace(
            "mov.u32",
            "mov.b64 {%r2, %r3}, %rd1;\n\tcvt.rn.f32.s32 %f1, %r1;\n\tselp.b32 %r4, %r1, %r17, %p1;\n\tmov.u32",
        );
        assert!(waits_first(&vectors), "vector operands and conversions are harmless");
    }

    #[test]
    fn anything_that_may_touch_memory_or_leave_the_line_first_is_not_proven() {
        let before_wait = |statement: &str| {
            ENTER.replace("\n\tgriddepcontrol.wait;", &format!("{statement}\n\tgriddepcontrol.wait;"))
        };
        for statement in [
            "ld.global.f32 %f1, [%rd1];",
            "ld.f32 %f1, [%rd1];",
            "ld.shared.f32 %f1, [_ZZ4tileE1t];",
            "st.global.f32 [%rd1], %f1;",
            "atom.global.add.f32 %f1, [%rd1], %f2;",
            "red.global.add.f32 [%rd1], %f2;",
            "cp.async.ca.shared.global [%r1], [%rd1], 4;",
            "prefetch.global.L2 [%rd1];",
            "bra.uni $L__BB0_1;",
            "call.uni _Z6helperPf, (param0);",
            "ret;",
            "exit;",
            "trap;",
            "bar.sync 0;",
            "barrier.sync 0;",
            "membar.gl;",
            "$L__BB0_1:\n\tmov.u32 %r2, %r1;",
            "@%p1 mov.u32 %r2, %r1;",
            "tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [t, {%r1}];",
            "mbarrier.init.shared.b64 [%r1], 1;",
            // Every other way to reach memory, the line's end or another thread.
            "ld.global.nc.f32 %f1, [%rd1];",
            "ld.const.f32 %f1, [%rd1];",
            "ld.volatile.global.f32 %f1, [%rd1];",
            "ld.local.f32 %f1, [%rd1];",
            "st.local.f32 [%rd1], %f1;",
            "st.shared.f32 [_ZZ4tileE1t], %f1;",
            "ldu.global.f32 %f1, [%rd1];",
            "prefetchu.L1 [%rd1];",
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];",
            "cp.async.bulk.prefetch.L2.global [%rd1], 256;",
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], 256;",
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r1], %r2, [%r3];",
            "red.shared::cluster.add.u32 [%r1], 1;",
            "atom.shared.cas.b32 %r2, [%r1], 0, 1;",
            "tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [t, {%f5, %f6}];",
            "suld.b.1d.b32.trap {%r2}, [s, {%r1}];",
            "sust.b.1d.b32.trap [s, {%r1}], {%r2};",
            "mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 0;",
            "fence.proxy.async.shared::cta;",
            "membar.cta;",
            "bar.arrive 1, 64;",
            "barrier.cluster.arrive;",
            "isspacep.global %p1, %rd1;",
            "applypriority.global.L2::evict_normal [%rd1], 128;",
            "discard.global.L2 [%rd1], 128;",
            "createpolicy.fractional.L2::evict_last.b64 %rd2, 1.0;",
            "nanosleep.u32 100;",
            "brkpt;",
            "st.param.b64 [param0], %rd1;",
            "call.uni (retval0), vprintf, (param0, param1);",
            "call (retval0), %rd1, (param0), prototype_0;",
            "setmaxnreg.inc.sync.aligned.u32 240;",
            "shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;",
            "{ .reg .pred p; setp.ne.u32 p, %r1, 0; @p st.global.u32 [%rd1], %r1; }",
            "mov.u32 %r2, %r1; ld.global.f32 %f1, [%rd1];",
        ] {
            assert!(!waits_first(&before_wait(statement)), "{statement} before the wait");
            // After the wait it is no concern of the proof.
            assert!(waits_first(&ENTER.replace("\n\tld.global.f32", &format!("\n\t{statement}\n\tld.global.f32"))));
        }
    }

    /// What a statement split on `;` misreads: `.loc` ends at a newline, not a `;`, so ptxas
    /// assembles an instruction after it in the same statement (inline asm may place it after a
    /// brace, where the body's `.loc` line filter does not see it), and a `.pragma` string may
    /// hold a `;` and instruction text (ptxas warns of an unknown pragma and goes on).
    #[test]
    fn a_directive_that_may_hide_an_instruction_is_not_harmless() {
        let before_wait =
            |text: &str| ENTER.replace("\n\tgriddepcontrol.wait;", &format!("{text}\n\tgriddepcontrol.wait;"));
        for text in [
            "\t{ .loc 1 2 3\n\tld.global.f32 %f1, [%rd1];\n\t}",
            "\t{ .loc 1 2 3 st.global.f32 [%rd1], %f1;\n\t}",
            "\t.pragma \"nounroll; griddepcontrol.wait \";\n\tld.global.f32 %f1, [%rd1];",
            "\t.pragma \"nounroll\";",
            "\t.global .align 4 .b8 g[4];",
        ] {
            assert!(!waits_first(&before_wait(text)), "{text}");
        }
        // What nvcc declares in an entry stays harmless: registers, a stack frame, shared arrays,
        // a call sequence's parameters.
        for text in [
            "\t.local .align 8 .b8 __local_depot0[16];",
            "\t{\n\t.reg .pred %p<2>;\n\t.param .b64 param0;\n\t}",
            "\t.shared .align 16 .b8 _ZZ4tileE2t2[256];",
        ] {
            assert!(waits_first(&before_wait(text)), "{text}");
        }
    }

    #[test]
    fn a_guarded_or_missing_wait_is_not_proven() {
        assert!(!waits_first(&ENTER.replace("griddepcontrol.wait;", "@%p1 griddepcontrol.wait;")));
        assert!(!waits_first(&ENTER.replace("griddepcontrol.wait;", "@!%p1 griddepcontrol.wait;")));
        assert!(!waits_first(&ENTER.replace("griddepcontrol.wait;", "")));
        assert!(!waits_first(""));
        assert!(!waits_first(&ENTER.replace("\tgriddepcontrol.wait;", "$L__BB0_1:\n\tgriddepcontrol.wait;")));
    }
}
