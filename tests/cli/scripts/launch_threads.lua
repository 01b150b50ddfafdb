-- Prints the CPU threads this rank's runtimes take by default.
print("KILN_NUM_THREADS=" .. tostring(os.getenv("KILN_NUM_THREADS")))
