# Installs the libraries, headers and a CMake package so that find_package(sluice) gives
# sluice::sluice.
include(CMakePackageConfigHelpers)

get_property(sluice_modules GLOBAL PROPERTY SLUICE_MODULES)
install(TARGETS sluice ${sluice_modules} EXPORT sluiceTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS sluice_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

foreach(module core formats ops graph dataset strategy model estimator)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${module}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice/${module}
    FILES_MATCHING PATTERN "*.h")
endforeach()

install(EXPORT sluiceTargets NAMESPACE sluice:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/sluiceConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sluiceConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sluiceConfig.cmake ${PROJECT_BINARY_DIR}/sluiceConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/sluice)
