#ifndef FORCESCALE_CMOSQUITTO_SHIM_H
#define FORCESCALE_CMOSQUITTO_SHIM_H

// libmosquitto (Debian's libmosquitto-dev), the reference MQTT client, for forcescale-mqtt.
// Its API has no variadic functions and no macros that forcescale calls, so nothing needs a
// shim: Swift calls it directly, with the callbacks as @convention(c) closures that find
// their Swift object through mosquitto's user-data pointer.
#include <mosquitto.h>

#endif
