# The fuzz targets (issue 15), one list for tests/fuzz/CMakeLists.txt (the libFuzzer
# builds), tests/CMakeLists.txt (the corpus replays and the ctest entries) and run.sh
# (which reads this line): tests/fuzz/fuzz_<target>.c with its corpus/<target>/.
set(WQ_FUZZ_TARGETS json config time cron argv followup imap zone)
