//! Small loops of a kernel that load memory, unrolled by 4 (`llvm.loop.unroll.count`), as nvcc
//! unrolls them: a grid-stride loop (`while i < n { sum += x[i]; i += stride }`) then has four
//! loads in flight per thread instead of one, which a bandwidth-bound kernel needs to saturate
//! the GPU's memory. LLVM's own heuristics leave such a loop rolled: its trip count needs a
//! division (by the stride), which they count too expensive; an unroll count lets it pay that
//! once per thread.

use inkwell::basic_block::BasicBlock;
use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMGetMDKindIDInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue,
    LLVMValueAsMetadata,
};
use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, MetadataValue, Operand};

/// The unroll count, nvcc's for such loops.
const UNROLL: u64 = 4;
/// The largest loop body (instructions) unrolled: four copies stay within what LLVM unrolls
/// of a loop with a cheap trip count on nvptx (a quarter of its 300-instruction threshold).
const MAX_BODY: usize = 18;

/// Marks the innermost loops of `f` of at most [`MAX_BODY`] instructions, with one exit, that
/// load memory and carry no loop metadata yet; returns how many.
pub(super) fn unroll_small_loops(cx: &Context, f: FunctionValue<'_>) -> usize {
    let blocks: Vec<BasicBlock<'_>> = f.get_basic_block_iter().collect();
    let index = |b: BasicBlock<'_>| blocks.iter().position(|&x| x == b);
    let successors: Vec<Vec<usize>> = blocks
        .iter()
        .map(|b| {
            let Some(term) = b.get_terminator() else { return Vec::new() };
            (0..term.get_num_operands())
                .filter_map(|i| match term.get_operand(i) {
                    Some(Operand::Block(s)) => index(s),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut predecessors = vec![Vec::new(); blocks.len()];
    for (from, tos) in successors.iter().enumerate() {
        for &to in tos {
            predecessors[to].push(from);
        }
    }
    let loops = natural_loops(&successors, &predecessors);
    let loop_kind = c"llvm.loop";
    // SAFETY: a kind name of the context.
    let kind = unsafe {
        LLVMGetMDKindIDInContext(cx.raw(), loop_kind.as_ptr(), loop_kind.count_bytes() as u32)
    };
    let mut marked = 0;
    for (latch, header, body) in &loops {
        // Innermost: no other loop's header inside.
        if loops.iter().any(|(_, h, _)| h != header && body.contains(h)) {
            continue;
        }
        // One latch, and the latch the only way out: a loop with several back edges or exits
        // (a bounds check's trap, a `break`) would be unrolled with an exit test in every copy,
        // which gains nothing.
        if loops.iter().filter(|(_, h, _)| h == header).count() != 1 {
            continue;
        }
        let exits = |b: &usize| successors[*b].iter().any(|s| !body.contains(s));
        if body.iter().filter(|b| exits(b)).any(|b| b != latch) {
            continue;
        }
        let instructions: Vec<_> =
            body.iter().flat_map(|&b| blocks[b].get_instructions()).collect();
        let loads = instructions.iter().any(|i| i.get_opcode() == InstructionOpcode::Load);
        let Some(branch) = blocks[*latch].get_terminator() else { continue };
        if !loads || instructions.len() > MAX_BODY || branch.get_metadata(kind).is_some() {
            continue;
        }
        let _ = branch.set_metadata(unroll_count(cx), kind);
        marked += 1;
    }
    marked
}

/// `distinct !{self, !{!"llvm.loop.unroll.count", i32 4}}`: a loop id asking for [`UNROLL`].
fn unroll_count<'ctx>(cx: &'ctx Context) -> MetadataValue<'ctx> {
    let name = "llvm.loop.unroll.count";
    let count = cx.i32_type().const_int(UNROLL, false);
    // SAFETY: metadata of the context, built as the C API documents: a temporary first operand
    // replaced by the node itself, which makes the loop id distinct (self-referential).
    unsafe {
        let c = cx.raw();
        let string = LLVMMDStringInContext2(c, name.as_ptr().cast(), name.len());
        let mut hint = [string, LLVMValueAsMetadata(count.as_value_ref())];
        let hint = LLVMMDNodeInContext2(c, hint.as_mut_ptr(), hint.len());
        let temporary = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut operands = [temporary, hint];
        let id = LLVMMDNodeInContext2(c, operands.as_mut_ptr(), operands.len());
        LLVMMetadataReplaceAllUsesWith(temporary, id);
        MetadataValue::new(LLVMMetadataAsValue(c, id))
    }
}

/// The natural loops of a control-flow graph whose block 0 is the entry: `(latch, header,
/// body)` for each back edge (an edge to a block on the depth-first path), the body being the
/// header and every block that reaches the latch without passing it.
fn natural_loops(
    successors: &[Vec<usize>],
    predecessors: &[Vec<usize>],
) -> Vec<(usize, usize, Vec<usize>)> {
    let n = successors.len();
    let (mut on_path, mut seen) = (vec![false; n], vec![false; n]);
    let mut back_edges = Vec::new();
    // Iterative depth-first search: (block, next successor to visit).
    let mut stack = Vec::new();
    if n > 0 {
        stack.push((0, 0));
        seen[0] = true;
        on_path[0] = true;
    }
    while let Some(&mut (block, ref mut next)) = stack.last_mut() {
        if let Some(&to) = successors[block].get(*next) {
            *next += 1;
            if on_path[to] {
                back_edges.push((block, to));
            } else if !seen[to] {
                seen[to] = true;
                on_path[to] = true;
                stack.push((to, 0));
            }
        } else {
            on_path[block] = false;
            stack.pop();
        }
    }
    back_edges
        .into_iter()
        .map(|(latch, header)| {
            let mut body = vec![header];
            let mut work = vec![latch];
            while let Some(b) = work.pop() {
                if !body.contains(&b) {
                    body.push(b);
                    work.extend(&predecessors[b]);
                }
            }
            (latch, header, body)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::natural_loops;

    fn predecessors(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
        let mut p = vec![Vec::new(); successors.len()];
        for (from, tos) in successors.iter().enumerate() {
            for &to in tos {
                p[to].push(from);
            }
        }
        p
    }

    #[test]
    fn loops_nested_and_alone() {
        // 0 -> 1 (outer header) -> 2 (inner header) -> 3 (inner latch) -> 2 | 4 (outer latch)
        // -> 1 | 5 (exit)
        let succ = vec![vec![1], vec![2], vec![3], vec![2, 4], vec![1, 5], vec![]];
        let mut loops = natural_loops(&succ, &predecessors(&succ));
        for (_, _, body) in &mut loops {
            body.sort();
        }
        loops.sort();
        assert_eq!(loops, [(3, 2, vec![2, 3]), (4, 1, vec![1, 2, 3, 4])]);
        // A straight line has none; a self-loop is its own latch.
        let line = vec![vec![1], vec![2], vec![]];
        assert!(natural_loops(&line, &predecessors(&line)).is_empty());
        let selfloop = vec![vec![1], vec![1, 2], vec![]];
        assert_eq!(natural_loops(&selfloop, &predecessors(&selfloop)), [(1, 1, vec![1])]);
    }
}
