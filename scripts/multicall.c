// The entry of the multi-call program that scripts/release-build links: forcescale, with
// forcescaled, forcescale-web and forcescale-mqtt installed as links to it, runs the program
// its name says. Each program's main is its own module's entry point, which SwiftPM names
// <module>_main so that one link can hold several.

#include <string.h>

int forcescale_main(int argc, char **argv);
int forcescaled_main(int argc, char **argv);
int forcescale_web_main(int argc, char **argv);
int forcescale_mqtt_main(int argc, char **argv);

int main(int argc, char **argv) {
    const char *path = argc > 0 && argv[0] ? argv[0] : "forcescale";
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (strcmp(name, "forcescaled") == 0) return forcescaled_main(argc, argv);
    if (strcmp(name, "forcescale-web") == 0) return forcescale_web_main(argc, argv);
    if (strcmp(name, "forcescale-mqtt") == 0) return forcescale_mqtt_main(argc, argv);
    return forcescale_main(argc, argv);
}
