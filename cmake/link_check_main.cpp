// The program of each stage's link check (CMakeLists.txt, graphsub_stage): it runs nothing.
// Linking it pulls in every object of the stage with only the stages that stage links, so a
// call into a stage it does not link leaves an undefined symbol and fails the build.
int main() { return 0; }
