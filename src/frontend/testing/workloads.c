#include "frontend/testing/workloads.h"
