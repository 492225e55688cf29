// Its kernel lives in the header it includes.
#include "in_header.cuh"
