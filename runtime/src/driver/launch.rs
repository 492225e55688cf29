//! Kernel functions: parameter queries and the launch with attributes.

use std::ffi::c_void;

use cudarc::driver::{sys, DriverError};

/// `cuFuncGetParamInfo` (CUDA 12.4): the offset and size in bytes of parameter `index` of
/// `func`; `CUDA_ERROR_INVALID_VALUE` past its last parameter.
///
/// # Safety
/// `func` is a live function handle; the driver is at least CUDA 12.4 (older drivers lack the
/// entry point, and cudarc's loader panics).
#[inline]
pub(crate) unsafe fn func_param_info(func: sys::CUfunction, index: usize) -> Result<(usize, usize), DriverError> {
    let (mut offset, mut size) = (0usize, 0usize);
    // SAFETY: the two out-pointers are valid; `func` as the caller promises.
    unsafe { sys::cuFuncGetParamInfo(func, index, &mut offset, &mut size) }.result()?;
    Ok((offset, size))
}

/// `cuLaunchKernelEx`: launches `func` as `config` describes, with `args` (one pointer per kernel
/// parameter, to its value).
///
/// # Safety
/// `config` (and the attributes it points to) is valid for the call, its stream live in the
/// current context; `func` is a live function of that context; `args` matches the kernel's
/// parameters in number, order and type, each pointer valid for the call; the memory the kernel
/// touches stays valid until it finishes.
#[inline]
pub(crate) unsafe fn launch_kernel_ex(
    config: &sys::CUlaunchConfig,
    func: sys::CUfunction,
    args: *mut *mut c_void,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise; no `extra` array is passed.
    unsafe { sys::cuLaunchKernelEx(config, func, args, std::ptr::null_mut()) }.result()
}
