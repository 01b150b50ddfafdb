-- Prints the CPU threads this rank's runtimes and oneDNN's OpenMP pool take by default.
print("KILN_NUM_THREADS=" .. tostring(os.getenv("KILN_NUM_THREADS")))
print("OMP_NUM_THREADS=" .. tostring(os.getenv("OMP_NUM_THREADS")))
