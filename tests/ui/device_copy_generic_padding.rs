//! A generic `DeviceCopy` struct has padding or not depending on its type arguments:
//! `Pair<u32, f32>` has none, `Pair<u8, u64>` has 7 bytes of it, which a preload would copy
//! uninitialised. Every public way to hand a `DeviceCopy` type to the device checks the
//! instantiation it is given, when the program is compiled (each path below uses a type of its
//! own, since the compiler reports each failing instantiation once). Unpadded instantiations,
//! nested ones included, still compile.
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

use offload::{Device, HostBuffer};

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
struct Pair<A, B> {
    //~^ ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    //~| ERROR `Pair` has padding with these type arguments
    a: A,
    b: B,
}

/// A generic struct of a generic struct: padded where its `Pair` is, though it adds none.
#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
struct Nested<T> {
    pair: Pair<T, u64>,
    rest: [u64; 2],
}

fn main() -> Result<(), offload::Error> {
    // Unpadded: accepted.
    let fine = [Pair { a: 1u32, b: 2.0f32 }; 4];
    let _fine = offload::preload(&fine);
    let mut wide = vec![Pair { a: 1.0f64, b: 2u64 }; 4];
    let _wide = offload::preload_mut(&mut wide[..]);
    let nested = Nested { pair: Pair { a: 1u64, b: 2 }, rest: [3, 4] };
    let _nested = offload::preload(&nested);

    // Padded: refused, whichever way the data goes.
    let p1 = [Pair { a: 1u8, b: 2u64 }; 4];
    let _p1 = offload::preload(&p1);
    let mut p2 = vec![Pair { a: 1u8, b: 2u32 }; 4];
    let _p2 = offload::preload_mut(&mut p2[..]);
    let p3 = Pair { a: 1u8, b: 2u16 };
    let _p3 = offload::try_preload(&p3)?;
    let mut p4 = Pair { a: 1u16, b: 2u32 };
    let _p4 = offload::try_preload_mut(&mut p4)?;
    let device = Device::default_device()?;
    let p5 = Pair { a: 1u16, b: 2u64 };
    let _p5 = device.preload(&p5)?;
    let mut p6 = Pair { a: 1u32, b: 2u64 };
    let _p6 = device.preload_mut(&mut p6)?;
    let _p7 = HostBuffer::new(4, Pair { a: 1i8, b: 2i16 })?;
    let _p8 = HostBuffer::from_slice(&[Pair { a: 1i8, b: 2i32 }])?;
    let p9 = Nested { pair: Pair { a: 1i8, b: 2 }, rest: [3, 4] };
    let _p9 = offload::preload(&p9);
    let p10 = Pair { a: Pair { a: 1i16, b: 2u64 }, b: 3u64 };
    let _p10 = offload::preload(&p10);
    Ok(())
}
