# preload/: the POSIX preload library (see preload/README.md)
