/*
 * empty_unit.c — stands in for a folder's sources while the folder has
 * none, so that the build configures at every step of development. ISO C
 * forbids an empty translation unit, hence the declaration.
 */
typedef int dc_empty_unit;
