//! Every NVIDIA image defines the runtime's device environment, 48 bytes, which libomptarget 19
//! looks up and writes when it loads the image: its lookup succeeds, so `compute-sanitizer`
//! reports no failed driver call. The kernels do not touch it.

// CHECK: .visible .global .align 8 .b8 __omp_rtl_device_environment[48];
// CHECK-NOT: __omp_rtl_device_environment
