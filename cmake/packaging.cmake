# Install rules and the Debian package: `make package` (cpack -G DEB) builds
# gpu-preflight_<version>_<arch>.deb in the build directory.
include(GNUInstallDirs)
set(GPF_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/gpu-preflight)
set(GPF_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/gpu-preflight)

# The man page, generated from the binary's own --help so its option list cannot go stale;
# gzip -n keeps the package reproducible (no timestamp or name in the header).
set(GPF_MAN ${PROJECT_BINARY_DIR}/gpu-preflight.1)
add_custom_command(
  OUTPUT ${GPF_MAN}.gz
  COMMAND ${PROJECT_SOURCE_DIR}/scripts/gen-manpage.sh $<TARGET_FILE:gpu-preflight>
          ${PROJECT_SOURCE_DIR}/docs/man/gpu-preflight.1.in ${GPF_MAN}
  COMMAND gzip -9nf ${GPF_MAN}
  DEPENDS gpu-preflight ${PROJECT_SOURCE_DIR}/scripts/gen-manpage.sh ${PROJECT_SOURCE_DIR}/docs/man/gpu-preflight.1.in
  COMMENT "Generating the man page from --help"
  VERBATIM)
add_custom_target(manpage ALL DEPENDS ${GPF_MAN}.gz)

install(TARGETS gpu-preflight RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${GPF_MAN}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(PROGRAMS contrib/slurm/healthcheck.sh contrib/slurm/prolog.sh DESTINATION ${GPF_SHARE_DIR}/slurm)
install(FILES contrib/slurm/common.sh DESTINATION ${GPF_SHARE_DIR}/slurm)
install(PROGRAMS contrib/slurm/fleet-check.sh DESTINATION ${GPF_SHARE_DIR}/slurm)
install(PROGRAMS contrib/prometheus/gpu-preflight-textfile.sh DESTINATION ${GPF_SHARE_DIR}/prometheus)
install(FILES contrib/prometheus/gpu-preflight-textfile.service contrib/prometheus/gpu-preflight-textfile.timer
              contrib/prometheus/gpu-preflight-alerts.yml
        DESTINATION ${GPF_SHARE_DIR}/prometheus)
install(FILES contrib/kubernetes/npd-gpu-preflight.json contrib/kubernetes/npd-gpu-preflight-pod.json
              contrib/kubernetes/npd-gpu-preflight-daemonset.yaml
        DESTINATION ${GPF_SHARE_DIR}/kubernetes)
install(FILES docs/report.schema.json DESTINATION ${GPF_SHARE_DIR})
install(FILES README.md ARCHITECTURE.md DESTINATION ${GPF_DOC_DIR})
install(DIRECTORY docs/ DESTINATION ${GPF_DOC_DIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "examples" EXCLUDE PATTERN "man" EXCLUDE)
install(FILES LICENSE DESTINATION ${GPF_DOC_DIR} RENAME copyright)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpu-preflight)
set(CPACK_PACKAGE_VENDOR "gpu-preflight")
set(CPACK_PACKAGE_CONTACT "gpu-preflight maintainers <gpu-preflight@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "can this machine train right now, on which GPUs, and if not, why")
set(CPACK_PACKAGE_DESCRIPTION
    "gpu-preflight checks a GPU node before a training job: driver, device nodes, kernel modules and
the job environment, through a table of rules with sources. It prints a verdict with quoted
evidence and a remedy per finding, and the CUDA_VISIBLE_DEVICES to use. Ships a Slurm
HealthCheckProgram and Prolog and a Kubernetes node-problem-detector plugin configuration.")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/gpu-preflight/gpu-preflight")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The run-time libraries (libc, libstdc++) from the binary itself, through dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurm-wlm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
