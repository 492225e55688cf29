//! [`SlotBus`]: a small array of `f32` values in device memory that the host sets one at a time,
//! in stream order, and reads back all at once.

use cudarc::driver::CudaEvent;

use crate::memory::buffer::DeviceBuffer;

use crate::driver;
use crate::error::{Error, MemoryError, Result};
use crate::launch::args::DeviceIn;
use crate::memory::device::Device;
use crate::memory::mapped::MappedBuffer;

/// `n` `f32` slots in device memory (kernels take [`SlotBus::slots`] as a `const float*`).
///
/// [`SlotBus::write`] is stream-ordered: the value is put into the slot's own mapped pinned
/// staging cell and a 4-byte device-to-device copy on the device's main stream moves it into
/// the slot, so a kernel launched before the write sees the old value and one launched after
/// sees the new one. Rewriting a slot waits only until that slot's previous copy has run.
#[derive(Debug)]
pub struct SlotBus {
    name: String,
    device: Device,
    slots: DeviceBuffer<f32>,
    staging: MappedBuffer<f32>,
    /// Per slot: the event recorded after its last copy, and whether that copy may be queued.
    copies: Vec<(Option<CudaEvent>, bool)>,
    /// A copy may still be queued that no event covers (its event record failed, and so did the
    /// stream wait after it): every write first waits for the main stream until a wait succeeds,
    /// so no staging cell is rewritten while that copy may still read it.
    unsettled: bool,
}

impl SlotBus {
    /// `n_slots` zeroed slots, named `"slot bus"` in errors.
    pub fn new(device: &Device, n_slots: usize) -> Result<Self> {
        Self::with_name(device, "slot bus", n_slots)
    }

    /// `n_slots` zeroed slots; `name` identifies the bus in errors.
    pub fn with_name(device: &Device, name: impl Into<String>, n_slots: usize) -> Result<Self> {
        let name = name.into();
        let slots = device.alloc_zeros::<f32>(n_slots)?;
        let staging = MappedBuffer::new(device, n_slots)?;
        let copies = (0..n_slots).map(|_| (None, false)).collect();
        Ok(SlotBus { name, device: device.clone(), slots, staging, copies, unsettled: false })
    }

    /// The bus's name, as used in errors.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        self.copies.len()
    }

    /// True when the bus has no slots.
    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }

    /// Sets `slot` to `v`, in order on the device's main stream. [`MemoryError::OutOfRange`] (naming
    /// the bus) for a slot past the end; [`GraphError::Failed`](crate::GraphError::Failed) while the main stream is capturing.
    pub fn write(&mut self, slot: usize, v: f32) -> Result<()> {
        let len = self.len();
        if slot >= len {
            return Err(Error::Memory(MemoryError::OutOfRange {
                what: format!("slot bus `{}`", self.name),
                index: slot,
                len,
            }));
        }
        let op = format!("slot bus `{}`: write slot {slot}", self.name);
        self.device.ensure_not_capturing(&op)?;
        let ctx = self.device.ctx.clone();
        let stream = self.device.stream.clone();
        if self.unsettled {
            // Through the driver (cudarc's `synchronize` can return a stored error without
            // waiting); until it succeeds, nothing is written.
            crate::context::wait_stream_raw(&stream)
                .map_err(|e| Error::driver(format!("{op}: wait for a copy queued without its event"), e))?;
            self.unsettled = false;
        }
        let (event, in_flight) = &mut self.copies[slot];
        if *in_flight {
            if let Some(event) = event.as_ref() {
                event.synchronize().map_err(|e| Error::driver(format!("{op}: wait for the previous copy"), e))?;
            }
            *in_flight = false;
        }
        let event = match event {
            Some(event) => event,
            empty => empty.insert(ctx.new_event(None).map_err(|e| Error::driver(format!("{op}: create event"), e))?),
        };
        // SAFETY: `slot < n_slots` cells; the cell is idle (its last copy has run, waited
        // above, and no copy without an event is queued: `unsettled` is clear), and other
        // cells, which queued copies may still read, are not touched. Volatile, as every host
        // access to mapped memory, and no reference is formed.
        unsafe { self.staging.host_ptr().add(slot).write_volatile(v) };
        let cell_bytes = std::mem::size_of::<f32>();
        let src = self.staging.device_addr_unlent() + (slot * cell_bytes) as u64;
        let dst = self.slots.device_addr() + (slot * cell_bytes) as u64;
        ctx.bind_to_thread().map_err(|e| Error::driver(format!("{op}: bind context"), e))?;
        // SAFETY: `src` is the device address of staging cell `slot` (< n_slots cells) and `dst`
        // of device slot `slot` (< n_slots slots), 4 bytes each, both alive while `self` is;
        // the stream belongs to this context.
        unsafe { driver::memory::memcpy_dtod_async(dst, src, cell_bytes, stream.cu_stream()) }
            .map_err(|e| Error::driver(format!("{op}: cuMemcpyDtoDAsync"), e))?;
        if let Err(e) = event.record(&stream) {
            // Without the event this copy cannot be waited for alone: wait for the stream,
            // through the driver (cudarc's `synchronize` can return a stored error without
            // waiting). Should that fail too, the copy may still be queued: the staging's drop
            // then waits for the context rather than free the cell under it.
            if let Err(waited) = crate::context::wait_stream_raw(&stream) {
                self.staging.mark_device_use();
                self.unsettled = true;
                return Err(Error::driver(format!("{op}: synchronize after a failed event record ({e:?})"), waited));
            }
            return Err(Error::driver(format!("{op}: record event"), e));
        }
        *in_flight = true;
        Ok(())
    }

    /// All slots, after every queued write (waits for the main stream up to this point).
    pub fn snapshot(&self) -> Result<Vec<f32>> {
        self.device.download(&self.slots)
    }

    /// The device slots, for kernel arguments.
    pub fn slots(&self) -> &DeviceBuffer<f32> {
        &self.slots
    }
}

impl Drop for SlotBus {
    fn drop(&mut self) {
        // The staging cells must outlive the copies that read them.
        for (event, in_flight) in &self.copies {
            if let (true, Some(event)) = (*in_flight, event) {
                if let Err(e) = event.synchronize() {
                    self.device.ctx.record_err(Err::<(), _>(e));
                    // Could not wait for this copy: the staging's own drop then waits for the
                    // whole context (and leaks the cells if even that fails).
                    self.staging.mark_device_use();
                }
            }
        }
    }
}
