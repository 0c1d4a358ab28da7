#ifndef FORCESCALE_CYAML_SHIM_H
#define FORCESCALE_CYAML_SHIM_H

// libyaml (Debian's libyaml-dev), for `libinput record` files. <yaml.h> includes only
// <stdlib.h>, <stdio.h> and <string.h>.
#include <yaml.h>

#endif
