//! The operands' checks, made before anything runs: every failure is
//! `offload::Error::InvalidOperands`.

use core::ffi::c_int;

use offload::{Device, Error};

/// An `InvalidOperands` of `routine`.
pub(crate) fn invalid(routine: &'static str, reason: String) -> Error {
    Error::InvalidOperands { routine, reason }
}

/// That a `rows x cols` matrix named `name`, rows `ld` apart, fits in `len` elements.
pub(crate) fn fits(
    routine: &'static str,
    name: &str,
    (rows, cols, ld): (usize, usize, usize),
    len: usize,
) -> Result<(), Error> {
    if ld < cols.max(1) {
        return Err(invalid(
            routine,
            format!("{name}'s rows are {ld} elements apart, fewer than its {cols} columns (and 1)"),
        ));
    }
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let needs = (rows - 1).checked_mul(ld).and_then(|n| n.checked_add(cols));
    match needs {
        Some(needs) if needs <= len => Ok(()),
        _ => Err(invalid(
            routine,
            format!(
                "{name} is {rows} x {cols} with rows {ld} elements apart, which needs {} elements; \
                 its data has {len}",
                needs.map_or("more than usize::MAX".to_owned(), |n| n.to_string())
            ),
        )),
    }
}

/// That two extents that must be equal are: `what` says which.
pub(crate) fn agree(routine: &'static str, what: &str, a: usize, b: usize) -> Result<(), Error> {
    if a == b { Ok(()) } else { Err(invalid(routine, format!("{what}: {a} against {b}"))) }
}

/// The one device every operand is on.
pub(crate) fn same_device(routine: &'static str, devices: &[Device]) -> Result<Device, Error> {
    let first = devices[0];
    match devices.iter().find(|d| **d != first) {
        None => Ok(first),
        Some(other) => Err(invalid(
            routine,
            format!(
                "operands on devices {} and {} (preload them on one device)",
                first.id(),
                other.id()
            ),
        )),
    }
}

/// `value` as cuBLAS's `int`.
pub(crate) fn int(routine: &'static str, what: &str, value: usize) -> Result<c_int, Error> {
    c_int::try_from(value).map_err(|_| {
        invalid(
            routine,
            format!("{what} is {value}, more than cuBLAS's int holds ({})", c_int::MAX),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_fits_its_data_and_its_rows_their_leading_dimension() {
        assert!(fits("gemm", "A", (3, 4, 4), 12).is_ok());
        assert!(fits("gemm", "A", (3, 4, 10), 24).is_ok());
        assert!(fits("gemm", "A", (0, 4, 4), 0).is_ok());
        let short = fits("gemm", "A", (3, 4, 10), 23).unwrap_err().to_string();
        assert_eq!(
            short,
            "invalid operands for gemm: A is 3 x 4 with rows 10 elements apart, which needs 24 \
             elements; its data has 23"
        );
        let narrow = fits("gemm", "B", (3, 4, 3), 100).unwrap_err().to_string();
        assert!(
            narrow.contains("B's rows are 3 elements apart, fewer than its 4 columns"),
            "{narrow}"
        );
        assert!(fits("gemm", "C", (2, 0, 0), 0).is_err(), "cuBLAS needs a leading dimension of 1");
        let huge = fits("gemm", "A", (usize::MAX, 2, usize::MAX), 4).unwrap_err().to_string();
        assert!(huge.contains("more than usize::MAX"), "{huge}");
    }

    #[test]
    fn extents_and_sizes_are_checked() {
        assert!(agree("gemm", "A's columns and B's rows", 3, 3).is_ok());
        let e = agree("gemm", "A's columns and B's rows", 3, 4).unwrap_err().to_string();
        assert_eq!(e, "invalid operands for gemm: A's columns and B's rows: 3 against 4");
        assert_eq!(int("axpy", "n", 7).unwrap(), 7);
        let e = int("axpy", "n", 1 << 31).unwrap_err().to_string();
        assert!(e.contains("n is 2147483648, more than cuBLAS's int holds (2147483647)"), "{e}");
    }
}
