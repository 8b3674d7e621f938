//! Slices compared with `==` in a kernel: rows of bytes, equal or differing at their first,
//! middle or last byte. On nvptx the comparison calls `memcmp`/`bcmp`, which the library
//! defines there (nothing else does). Three copies in, one out.
//@ run: 300 => h2d=3 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let rows: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let width = 37usize;
    let a: Vec<u8> = (0..rows * width).map(|i| (i * 7 % 251) as u8).collect();
    let mut b = a.clone();
    // Row r differs at byte r % 4 (0: none, 1: first, 2: middle, 3: last).
    for r in 0..rows {
        let at = match r % 4 {
            0 => continue,
            1 => 0,
            2 => width / 2,
            _ => width - 1,
        };
        b[r * width + at] ^= 0x80;
    }
    let mut equal = vec![7u32; rows];
    let blocks = rows.div_ceil(128) as u32;
    offload::launch!(
        kernels::equal_rows,
        blocks,
        128,
        (width as u32, &a[..], &b[..], &mut equal[..])
    )?;
    for (r, e) in equal.iter().enumerate() {
        assert_eq!(*e, u32::from(r % 4 == 0), "row {r}");
    }
    println!("ok: {rows} rows of {width} bytes");
    Ok(())
}
