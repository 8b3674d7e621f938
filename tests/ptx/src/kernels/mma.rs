//! `offload::gpu::mma`: each kind's product is one `mma.sync` of the tensor cores, and
//! fragments loaded from shared memory are one `ldmatrix` each (`.trans` for B).

use offload::bf16;
use offload::gpu::mma::{self, Accumulator, FragmentA, FragmentB, Tf32};
use offload::gpu::{MatrixMut, shared_array};

// CHECK-LABEL: .entry mma_bf16_shared(
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: ret;
#[offload::kernel]
pub fn mma_bf16_shared(c: &mut [f32]) {
    let tiles = shared_array::<bf16, { 16 * 24 + 16 * 24 }>();
    let (a, b) = (tiles.matrix(0, 16, 16, 24), tiles.matrix(16 * 24, 16, 16, 24));
    let a = FragmentA::<bf16>::load_shared(&a, 0, 0);
    let [b0, b1] = FragmentB::load_shared_pair(&b, 0, 0);
    let (mut c0, mut c1) = (Accumulator::zero(), Accumulator::zero());
    mma::mma(&a, &b0, &mut c0);
    mma::mma(&a, &b1, &mut c1);
    let mut c = MatrixMut::new(c, 16, 16);
    c0.store(&mut c, 0, 0);
    c1.store(&mut c, 0, 8);
}

// CHECK-LABEL: .entry mma_tf32_f64(
// CHECK: cvt.rna.tf32.f32
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64
// CHECK: ret;
#[offload::kernel]
pub fn mma_tf32_f64(a: &[f32], d: &[f64], c: &mut [f32], e: &mut [f64]) {
    use offload::gpu::Matrix;
    let (a, d) = (Matrix::new(a, 16, 8), Matrix::new(d, 16, 8));
    let mut acc = Accumulator::<Tf32>::zero();
    mma::mma(&FragmentA::load(&a, 0, 0), &FragmentB::load(&a, 8, 0), &mut acc);
    acc.store(&mut MatrixMut::new(c, 16, 8), 0, 0);
    let mut acc = Accumulator::<f64>::zero();
    mma::mma(&FragmentA::load(&d, 0, 0), &FragmentB::load(&d, 8, 0), &mut acc);
    acc.store(&mut MatrixMut::new(e, 16, 8), 0, 0);
}

// 3xTF32: A's raw f32 bits by `ldmatrix`, each element split into a head (rounded in its
// bits: an add and a mask, no conversion) and a tail (a subtraction, nothing chosen), and three
// TF32 products, the head's last.
// CHECK-LABEL: .entry mma_tf32x3_shared(
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-NOT: {{cvt\.rna|selp|setp|bra}}
// CHECK: add.s32 {{%r[0-9]+}}, {{%r[0-9]+}}, 4096;
// CHECK: and.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, -8192;
// CHECK-NOT: {{cvt\.rna|selp|setp|bra}}
// CHECK: sub.rn.f32
// CHECK-NOT: {{cvt\.rna|selp|setp|bra}}
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-NOT: {{cvt\.rna|ld|selp|setp|bra}}
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-NOT: {{cvt\.rna|ld|selp|setp|bra}}
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-NOT: mma.sync
// CHECK: ret;
#[offload::kernel]
pub fn mma_tf32x3_shared(c: &mut [f32]) {
    use offload::gpu::mma::Tf32x3;
    let tiles = shared_array::<f32, { 16 * 12 + 8 * 12 }>();
    let (a, b) = (tiles.matrix(0, 16, 8, 12), tiles.matrix(16 * 12, 8, 8, 12));
    let mut acc = Accumulator::<Tf32x3>::zero();
    mma::mma(&FragmentA::load_shared(&a, 0, 0), &FragmentB::load_shared(&b, 0, 0), &mut acc);
    acc.store(&mut MatrixMut::new(c, 16, 8), 0, 0);
}
