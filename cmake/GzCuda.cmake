# GZ_ENABLE_CUDA selects how the kernels of kernels/*.cu are built
# (GZ_DEVICE_BACKEND):
#   ON    nvcc, for GPUs (an error without nvcc);
#   EMU   the host C++ compiler against kernels/emu/: the kernels run on the
#         CPU (the GPU tests then run on machines without a GPU; the device
#         is visible only with GZ_DEVICE_EMULATE=1, docs/gpu.md);
#   AUTO  nvcc when found, EMU otherwise;
#   OFF   no device code (kernels/device_none.c).
# The CUDA runtime is linked statically, so CUDA binaries run on machines with
# no GPU and no CUDA driver; the device is detected at run time.
set(GZ_HAVE_CUDA OFF)
set(GZ_DEVICE_BACKEND NONE)
string(TOUPPER "${GZ_ENABLE_CUDA}" _gz_cuda)
if(_gz_cuda STREQUAL "ON" OR _gz_cuda STREQUAL "AUTO")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(_gz_nvcc nvcc PATHS /usr/local/cuda/bin)
    if(_gz_nvcc)
      set(CMAKE_CUDA_COMPILER ${_gz_nvcc})
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(GZ_HAVE_CUDA ON)
    set(GZ_DEVICE_BACKEND CUDA)
  elseif(_gz_cuda STREQUAL "ON")
    message(FATAL_ERROR "GZ_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    set(_gz_cuda EMU)
  endif()
elseif(NOT _gz_cuda STREQUAL "OFF" AND NOT _gz_cuda STREQUAL "EMU")
  message(FATAL_ERROR "GZ_ENABLE_CUDA must be AUTO, ON, EMU or OFF (got '${GZ_ENABLE_CUDA}')")
endif()
if(_gz_cuda STREQUAL "EMU")
  enable_language(CXX)
  set(GZ_DEVICE_BACKEND EMU)
endif()
