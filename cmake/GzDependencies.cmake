# Required dependencies. Debian 12 package names are in scripts/gz.sh.
find_package(MPI REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)

# Parallel HDF5 only: the OpenMPI build (libhdf5-openmpi-dev).
set(HDF5_PREFER_PARALLEL ON)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT HDF5_IS_PARALLEL)
  message(FATAL_ERROR "gzstack needs parallel HDF5 (Debian: libhdf5-openmpi-dev); "
                      "found a serial HDF5 at ${HDF5_INCLUDE_DIRS}")
endif()
add_library(gz_hdf5 INTERFACE)
target_include_directories(gz_hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
target_link_libraries(gz_hdf5 INTERFACE ${HDF5_C_LIBRARIES} MPI::MPI_C)
target_compile_definitions(gz_hdf5 INTERFACE ${HDF5_C_DEFINITIONS} ${HDF5_DEFINITIONS})

# netCDF is built against the serial HDF5: its include path (hdf5/serial) is
# kept on its own target so no file sees both HDF5 header sets.
pkg_check_modules(NETCDF REQUIRED IMPORTED_TARGET netcdf)
pkg_check_modules(PNG REQUIRED IMPORTED_TARGET libpng)
pkg_check_modules(ARGTABLE2 REQUIRED IMPORTED_TARGET argtable2)
pkg_check_modules(INIH REQUIRED IMPORTED_TARGET inih)
find_package(ZLIB REQUIRED)
# The entropy stage of codec format 2 (Debian: libzstd-dev).
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)

find_package(OpenMP COMPONENTS C)
find_library(GZ_ZFP_LIBRARY zfp)
find_path(GZ_ZFP_INCLUDE zfp.h)
if(GZ_ZFP_LIBRARY AND GZ_ZFP_INCLUDE)
  set(GZ_HAVE_ZFP ON)
else()
  set(GZ_HAVE_ZFP OFF)
endif()
find_library(GZ_LIBM m)
