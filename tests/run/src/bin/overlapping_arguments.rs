//! Plain `&T` arguments of one launch may overlap each other, as shared references may in Rust:
//! one inside another in either order, partly over each other, the same data twice. The
//! runtime maps a launch's entries one after another and cannot map an entry that encloses or
//! partly overlaps one mapped before it, so the library maps each group of overlapping `&T`
//! arguments as one range before the launch: the group is copied in once, whatever the
//! arguments' order, and the kernel sees each argument's own data.
//!
//! Copies, counted by the harness:
//! - seven launches over data nothing holds: the group in once, `out` in and back: 2 in and
//!   1 out each, 14 in and 7 out (before, the nested launch in the order that was accepted
//!   copied the inner range in a second time, and the other launches were refused);
//! - with `preload(&xs)` live: the preload 1 in; a group inside it is present and copied in
//!   again, as a lone plain `&T` there is, with `out`: 2 in, 1 out; `out`'s `PreloadMut` 1 in,
//!   nothing for the asynchronous launch over present ranges, 1 out at its drop: 4 in, 2 out;
//! - with `preload(&xs[10..20])` live: the preload 1 in, nothing for the three launches
//!   refused, 2 in and 1 out for the one inside it: 3 in, 1 out;
//! - at the end, `xs` preloaded whole (nothing is left mapped): 1 in.
//!
//! In all 22 in and 10 out.
//@ run: => h2d=22 d2h=10

use offload::Error;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

/// What `kernels::normalise` writes.
fn expected(window: &[f32], whole: &[f32], n: usize) -> Vec<f32> {
    let sum: f32 = whole.iter().sum();
    (0..n).map(|i| window[i % window.len()] / sum).collect()
}

fn main() -> Result<(), Error> {
    let xs: Vec<f32> = (1..=100).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; 32];
    let n = out.len();

    // The case that was refused (`OverlapsMapped`, "a preload of 400 bytes ..."), and the same
    // arguments the other way round: `xs` in once, `out` in and back.
    offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..10], &xs[..], &mut out[..]))?;
    assert_eq!(out, expected(&xs[..10], &xs, n));
    offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..], &xs[..10], &mut out[..]))?;
    assert_eq!(out, expected(&xs, &xs[..10], n));
    // Partly overlapping, in both orders: `xs[..]` in once (their union).
    offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..60], &xs[40..], &mut out[..]))?;
    assert_eq!(out, expected(&xs[..60], &xs[40..], n));
    offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[40..], &xs[..60], &mut out[..]))?;
    assert_eq!(out, expected(&xs[40..], &xs[..60], n));
    // The same data twice, and a range inside another that starts after it.
    offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..], &xs[..], &mut out[..]))?;
    assert_eq!(out, expected(&xs, &xs, n));
    offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[50..70], &xs[20..90], &mut out[..]))?;
    assert_eq!(out, expected(&xs[50..70], &xs[20..90], n));
    // On a device named explicitly.
    let device = offload::Device::get(offload::Device::count() - 1)?;
    offload::launch!(on device, kernels::normalise, 1u32, 32u32, (&xs[..10], &xs[5..], &mut out[..]))?;
    assert_eq!(out, expected(&xs[..10], &xs[5..], n));

    {
        // Inside a live `Preload` (1 in): present, the group copied in again as a lone `&T`
        // would be (1 in), `out` in and back.
        let all = offload::preload(&xs[..]);
        offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..10], &xs[5..30], &mut out[..]))?;
        assert_eq!(out, expected(&xs[..10], &xs[5..30], n));

        // Over present ranges only, asynchronously (on the host plugin it runs at once):
        // `out`'s `PreloadMut` in, and back when dropped.
        let mut dout = offload::preload_mut(&mut out[..]);
        offload::launch_async!(
            kernels::normalise,
            1u32,
            32u32,
            (&all.slice(..10), &all, &mut dout)
        )?;
        offload::synchronize()?;
        drop(dout);
        assert_eq!(out, expected(&xs[..10], &xs, n));
        drop(all);
    }
    {
        // Enclosing, or partly overlapping, a live `Preload`: the runtime cannot map it, so the
        // launch is refused before anything is copied, and its error names the launch.
        let middle = offload::preload(&xs[10..20]); // 1 in
        let before = out.clone();
        for refused in [
            offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..5], &xs[..], &mut out[..])),
            offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[..12], &xs[..5], &mut out[..])),
            offload::launch!(kernels::normalise, 1u32, 32u32, (&xs[15..], &xs[30..], &mut out[..])),
        ] {
            let e = refused.expect_err("overlaps a live Preload");
            assert!(matches!(e, Error::OverlapsMapped { kernel: Some("normalise"), .. }), "{e:?}");
            let message = e.to_string();
            assert!(message.starts_with("the launch of kernel `normalise`"), "{message}");
            assert!(!message.contains("a preload"), "{message}");
        }
        assert_eq!(out, before);
        // Inside it: present (the plain range copied in again, `out` in and back).
        offload::launch!(
            kernels::normalise,
            1u32,
            32u32,
            (&xs[12..14], &xs[10..20], &mut out[..])
        )?;
        assert_eq!(out, expected(&xs[12..14], &xs[10..20], n));
        drop(middle);
    }
    // Nothing is left mapped: the whole of `xs` maps again (1 in).
    drop(offload::try_preload(&xs[..]).expect("every launch released its mappings"));
    println!("ok");
    Ok(())
}
