#include "interp/interp.h"
