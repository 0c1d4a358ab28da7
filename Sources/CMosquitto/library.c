// The libmosquitto functions forcescale calls, under their own names, each calling the
// library's through CDeferredLibrary (see CDeferredLibrary.h). The compiler checks each
// definition against <mosquitto.h>; a function Swift calls that is missing here fails the
// link.

#include "CMosquitto.h"
#include "CDeferredLibrary.h"

#define MOSQUITTO_FUNCTIONS(X)                                                                                         \
    X(mosquitto_lib_init)                                                                                              \
    X(mosquitto_strerror)                                                                                              \
    X(mosquitto_connack_string)                                                                                        \
    X(mosquitto_new)                                                                                                   \
    X(mosquitto_destroy)                                                                                               \
    X(mosquitto_user_data_set)                                                                                         \
    X(mosquitto_username_pw_set)                                                                                       \
    X(mosquitto_tls_set)                                                                                               \
    X(mosquitto_will_set)                                                                                              \
    X(mosquitto_connect_callback_set)                                                                                  \
    X(mosquitto_message_callback_set)                                                                                  \
    X(mosquitto_publish_callback_set)                                                                                  \
    X(mosquitto_connect_async)                                                                                         \
    X(mosquitto_reconnect_async)                                                                                       \
    X(mosquitto_disconnect)                                                                                            \
    X(mosquitto_socket)                                                                                                \
    X(mosquitto_want_write)                                                                                            \
    X(mosquitto_loop_read)                                                                                             \
    X(mosquitto_loop_write)                                                                                            \
    X(mosquitto_loop_misc)                                                                                             \
    X(mosquitto_publish)                                                                                               \
    X(mosquitto_subscribe)

DEFERRED_LIBRARY(mosquitto, "libmosquitto.so.1", "libmosquitto1", MOSQUITTO_FUNCTIONS);

// The library's function `name`, with its own type.
#define REAL(name) DEFERRED_FUNCTION(mosquitto, name)

int mosquitto_lib_init(void) { return REAL(mosquitto_lib_init)(); }

const char *mosquitto_strerror(int mosq_errno) { return REAL(mosquitto_strerror)(mosq_errno); }

const char *mosquitto_connack_string(int connack_code) { return REAL(mosquitto_connack_string)(connack_code); }

struct mosquitto *mosquitto_new(const char *id, bool clean_session, void *obj) {
    return REAL(mosquitto_new)(id, clean_session, obj);
}

void mosquitto_destroy(struct mosquitto *mosq) { REAL(mosquitto_destroy)(mosq); }

void mosquitto_user_data_set(struct mosquitto *mosq, void *obj) { REAL(mosquitto_user_data_set)(mosq, obj); }

int mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    return REAL(mosquitto_username_pw_set)(mosq, username, password);
}

int mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                      const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return REAL(mosquitto_tls_set)(mosq, cafile, capath, certfile, keyfile, pw_callback);
}

int mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos,
                       bool retain) {
    return REAL(mosquitto_will_set)(mosq, topic, payloadlen, payload, qos, retain);
}

void mosquitto_connect_callback_set(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int)) {
    REAL(mosquitto_connect_callback_set)(mosq, on_connect);
}

void mosquitto_message_callback_set(struct mosquitto *mosq,
                                    void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *)) {
    REAL(mosquitto_message_callback_set)(mosq, on_message);
}

void mosquitto_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int)) {
    REAL(mosquitto_publish_callback_set)(mosq, on_publish);
}

int mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive) {
    return REAL(mosquitto_connect_async)(mosq, host, port, keepalive);
}

int mosquitto_reconnect_async(struct mosquitto *mosq) { return REAL(mosquitto_reconnect_async)(mosq); }

int mosquitto_disconnect(struct mosquitto *mosq) { return REAL(mosquitto_disconnect)(mosq); }

int mosquitto_socket(struct mosquitto *mosq) { return REAL(mosquitto_socket)(mosq); }

bool mosquitto_want_write(struct mosquitto *mosq) { return REAL(mosquitto_want_write)(mosq); }

int mosquitto_loop_read(struct mosquitto *mosq, int max_packets) { return REAL(mosquitto_loop_read)(mosq, max_packets); }

int mosquitto_loop_write(struct mosquitto *mosq, int max_packets) { return REAL(mosquitto_loop_write)(mosq, max_packets); }

int mosquitto_loop_misc(struct mosquitto *mosq) { return REAL(mosquitto_loop_misc)(mosq); }

int mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos,
                      bool retain) {
    return REAL(mosquitto_publish)(mosq, mid, topic, payloadlen, payload, qos, retain);
}

int mosquitto_subscribe(struct mosquitto *mosq, int *mid, const char *sub, int qos) {
    return REAL(mosquitto_subscribe)(mosq, mid, sub, qos);
}
