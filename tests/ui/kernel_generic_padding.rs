//! A padded instantiation of a generic `DeviceCopy` struct cannot be passed to a kernel: by
//! value its padding would fill the kernel's slot with uninitialised bytes, by reference it
//! would be copied to the device. Each launch below uses a type of its own, since the compiler
//! reports each failing instantiation once. Unpadded instantiations still launch.
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
pub struct Pair<A, B> {
    //~^ ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    pub a: A,
    pub b: B,
}

#[offload::kernel]
pub fn fine(p: Pair<u32, f32>, q: &Pair<f64, u64>, r: &mut [Pair<u16, u16>]) {
    let _ = (p, q, r);
}

#[offload::kernel]
pub fn by_value(p: Pair<u8, u32>) {
    let _ = p;
}

#[offload::kernel]
pub fn by_value_async(p: Pair<u8, u16>) {
    let _ = p;
}

#[offload::kernel]
pub fn by_reference(p: &Pair<u16, u64>) {
    let _ = p;
}

#[offload::kernel]
pub fn by_slice(p: &mut [Pair<u32, u64>]) {
    let _ = p;
}

fn main() -> Result<(), offload::Error> {
    let mut ok = [Pair { a: 1u16, b: 2u16 }; 4];
    offload::launch!(fine, 1, 4, (Pair { a: 1u32, b: 2.0f32 }, &Pair { a: 1.0f64, b: 2u64 }, &mut ok[..]))?;

    offload::launch!(by_value, 1, 1, (Pair { a: 1u8, b: 2u32 },))?;
    offload::launch_async!(by_value_async, 1, 1, (Pair { a: 1u8, b: 2u16 },))?;
    offload::launch!(by_reference, 1, 1, (&Pair { a: 1u16, b: 2u64 },))?;
    let mut many = vec![Pair { a: 1u32, b: 2u64 }; 4];
    offload::launch!(by_slice, 1, 4, (&mut many[..],))?;
    Ok(())
}
