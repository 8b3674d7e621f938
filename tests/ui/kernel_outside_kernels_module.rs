//! The device images hold the kernels of the kernels module alone (src/kernels.rs and the
//! modules it declares), which the build names to the compiler: a kernel elsewhere, beside
//! `main` as upstream's are, is refused at the kernel, with where to move it. A function that
//! is not a kernel is refused at the launch (its host-side value takes no arguments).
//@ rustc-env:OFFLOAD_KERNELS_MODULE=kernels
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

#[offload::kernel]
//~^ ERROR kernel `beside_main` is outside the kernels module
fn beside_main(y: &mut [f32]) {
    y[0] = 1.0;
}

mod kernels {
    #[offload::kernel]
    fn private(y: &mut [f32]) {
        y[0] = 1.0;
    }

    pub mod nested {
        #[offload::kernel]
        pub fn deeper(y: &mut [f32]) {
            y[0] = 1.0;
        }
    }
}

fn not_a_kernel(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() -> Result<(), offload::Error> {
    let mut y = [0.0f32; 4];
    // A private kernel of the kernels module is the crate's to launch.
    offload::launch!(kernels::private, 1, 1, (&mut y[..],))?;
    offload::launch!(kernels::nested::deeper, 1, 1, (&mut y[..],))?;
    offload::launch!(not_a_kernel, 1, 1, (&mut y[..],))?;
    //~^ ERROR function is expected to take 0 arguments, but it takes 1 argument
    //~| ERROR function is expected to take 0 arguments, but it takes 1 argument
    Ok(())
}
