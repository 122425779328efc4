# Warnings and sanitizers for every target of ours (gz_apply_flags).
set(GZ_C_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -Wno-unused-parameter)
if(GZ_WERROR)
  list(APPEND GZ_C_WARNINGS -Werror)
endif()
if(GZ_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C>:-fno-sanitize-recover=all>
                      $<$<COMPILE_LANGUAGE:C>:-fno-omit-frame-pointer>)
  add_link_options(-fsanitize=address,undefined)
endif()

# ThreadSanitizer (a separate small build: the emulated GPU kernels run one
# OS thread per GPU thread there, docs/gpu.md).
if(GZ_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

function(gz_apply_flags target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${GZ_C_WARNINGS}>)
endfunction()
