#ifndef FORCESCALE_CMOSQUITTO_H
#define FORCESCALE_CMOSQUITTO_H

// libmosquitto (Debian's libmosquitto-dev), the reference MQTT client, for forcescale-mqtt.
// Its API has no variadic functions and no macros that forcescale calls, so Swift calls it
// directly, with the callbacks as @convention(c) closures that find their Swift object
// through mosquitto's user-data pointer. The library itself is loaded when forcescale-mqtt
// first calls it (library.c, CDeferredLibrary.h): it and libssl stay out of the other
// programs of the multi-call build.
#include <mosquitto.h>

#endif
