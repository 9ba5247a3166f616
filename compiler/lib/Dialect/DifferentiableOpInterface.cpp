//===- DifferentiableOpInterface.cpp - Ops that state their gradient ------===//

#include "remat/Dialect/DifferentiableOpInterface.h"

#include "remat/Dialect/DifferentiableOpInterface.cpp.inc"
