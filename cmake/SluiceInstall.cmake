# Installs the libraries, headers and a CMake package so that find_package(sluice) gives
# sluice::sluice.
include(CMakePackageConfigHelpers)

get_property(sluice_modules GLOBAL PROPERTY SLUICE_MODULES)
install(TARGETS sluice ${sluice_modules} EXPORT sluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS sluice_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Headers that only the library's own sources include stay out of the installed tree: the engine
# that runs a plan, the stage implementations behind the plan nodes, the rewrites, the HDF5
# reader's pieces, the model's kernels built per instruction set and the Estimator's session loop. Public headers never include them, which the
# install test checks by resolving every "sluice/..." include of the installed tree.
set(sluice_internal_headers
  graph/async_stage.h graph/engine.h graph/optimize.h graph/selecting_stage.h
  graph/stages/batch.h graph/stages/cache.h graph/stages/combine.h graph/stages/element_wise.h
  graph/stages/prefetch.h graph/stages/repeat.h graph/stages/shard.h graph/stages/shuffle.h
  graph/stages/take_skip.h graph/stages/with_options.h formats/example_wire.h
  graph/stages/choose_from_datasets.h graph/stages/counter.h graph/stages/random.h
  graph/stages/sample_from_datasets.h graph/stages/take_while.h graph/stages/unique.h
  graph/stages/flat_map.h graph/stages/window.h dataset/file_reader_source.h
  core/memory_block.h ops/affine_warp.h ops/affine_warp_kernels.h model/simd.h model/gemm_kernel.h model/gemm_tiles.h
  model/direct_conv_kernels.h model/max_pool.h model/max_pool_kernels.h estimator/run_session.h)
set(sluice_internal_folders formats/hdf5)
# Nor do the headers of optional components this build leaves out.
if(NOT SLUICE_WITH_HDF5)
  list(APPEND sluice_internal_headers formats/hdf5_file.h)
endif()
if(NOT SLUICE_WITH_MPI)
  list(APPEND sluice_internal_headers strategy/multi_worker_mirrored_strategy.h)
endif()
foreach(module core formats ops graph dataset strategy model estimator)
  file(GLOB_RECURSE headers RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/${module}/*.h)
  foreach(header ${headers})
    get_filename_component(folder ${header} DIRECTORY)
    if(header IN_LIST sluice_internal_headers OR folder IN_LIST sluice_internal_folders)
      continue()
    endif()
    install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice/${folder})
  endforeach()
endforeach()
install(FILES ${SLUICE_GENERATED_DIR}/sluice/core/config.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice/core)

install(EXPORT sluiceTargets NAMESPACE sluice:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sluiceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sluiceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sluiceConfig.cmake ${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
