//===- CostOpInterface.cpp - Ops that state their arithmetic cost ---------===//

#include "remat/Dialect/CostOpInterface.h"

#include "remat/Dialect/CostOpInterface.cpp.inc"
