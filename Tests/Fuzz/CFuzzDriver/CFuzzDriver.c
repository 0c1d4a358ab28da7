// The declarations are all in the header; SwiftPM needs one source file for the target.
#include "CFuzzDriver.h"
