//! Points in a device's work, to time kernels by the GPU's own clock (CUDA events on the
//! library's stream).
//!
//! ```text
//! let start = offload::Event::record()?;
//! for _ in 0..10 {
//!     offload::launch_async!(kernels::step, blocks, 256, (&src, &mut dst))?;
//! }
//! let end = offload::Event::record()?;
//! let ms = end.elapsed_ms(&start)?; // waits for the kernels, then the GPU's time between
//! ```
//!
//! An event is recorded on the stream that `launch!` and `launch_async!` use: it times the
//! kernels launched between two events, not the copies of a preload or a `PreloadMut`'s drop
//! (the runtime makes those on streams of its own). On the host-offload plugin, whose launches
//! return when their kernel has run, an event is the host's clock at the record.

use std::time::Instant;

use crate::cuda::{Api, CuContext, CuEvent};
use crate::{Device, Error, stream};

/// A point in a device's work; see the module's documentation.
pub struct Event {
    at: At,
}

enum At {
    /// A CUDA event recorded on the library's stream of a GPU.
    Gpu { api: &'static Api, context: CuContext, event: CuEvent },
    /// The host's clock (the host-offload plugin: launches are synchronous).
    Host(Instant),
}

// SAFETY: driver handles may be used from any thread.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// Records an event on the default device, after every kernel launched there so far.
    pub fn record() -> Result<Event, Error> {
        Event::record_on_device(-1)
    }

    /// Records an event on `device`, after every kernel launched there so far.
    pub fn record_on(device: &Device) -> Result<Event, Error> {
        Event::record_on_device(device.runtime_id())
    }

    fn record_on_device(device: i64) -> Result<Event, Error> {
        let at = match stream::device_stream(device)? {
            Some((api, context, stream)) => {
                let event = api.with_context(context, || api.record_event(stream))?;
                At::Gpu { api, context, event }
            }
            None => At::Host(Instant::now()),
        };
        Ok(Event { at })
    }

    /// Milliseconds of the device's work between `earlier` and this event, once this one has
    /// happened (the call waits for the kernels before it). Both must be of one device.
    pub fn elapsed_ms(&self, earlier: &Event) -> Result<f64, Error> {
        match (&earlier.at, &self.at) {
            (At::Gpu { event: start, context: a, .. }, At::Gpu { api, context, event: end })
                if a == context =>
            {
                let ms = api.with_context(*context, || api.elapsed_ms(*start, *end))?;
                Ok(f64::from(ms))
            }
            (At::Host(start), At::Host(end)) => {
                Ok(end.saturating_duration_since(*start).as_secs_f64() * 1e3)
            }
            _ => Err(Error::EventDevices),
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let At::Gpu { api, context, event } = self.at {
            let _ = api.with_context(context, || {
                api.destroy_event(event);
                Ok(())
            });
        }
    }
}
