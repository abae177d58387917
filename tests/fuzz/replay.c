/* replay.c — runs a fuzz target's LLVMFuzzerTestOneInput over every file of a corpus
 * directory, without libFuzzer: the seeds and the regressions (inputs that once broke a
 * property or crashed, kept as corpus/<target>/regress-*) run in every build, under
 * ASan in the sanitizer build. Each input sits in a buffer of exactly its size, so a
 * read past its end is caught. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int main(int argc, char **argv)
{
	int n = 0;

	for (int a = 1; a < argc; a++) {
		DIR *d = opendir(argv[a]);
		struct dirent *de;

		if (!d) {
			perror(argv[a]);
			return 1;
		}
		while ((de = readdir(d))) {
			char path[4096];
			FILE *f;
			long len;
			unsigned char *buf;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[a], de->d_name);
			if (!(f = fopen(path, "rb")))
				continue;
			fseek(f, 0, SEEK_END);
			len = ftell(f);
			rewind(f);
			buf = malloc(len > 0 ? (size_t)len : 1);
			if (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len) {
				fclose(f);
				free(buf);
				return 1;
			}
			fclose(f);
			LLVMFuzzerTestOneInput(buf, (size_t)len);
			free(buf);
			n++;
		}
		closedir(d);
	}
	printf("ok: %d inputs\n", n);
	return n > 0 ? 0 : 1;
}
