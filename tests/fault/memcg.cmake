# fault.memcg (memcg.sh): creates memory cgroups and measures the peak
# usage of the runs in them, so it runs alone.  It reuses the integration
# programs (bigtext, libbigtext.so, json_flat): no helper program of its own.
list(APPEND fault_serial memcg)
# fault.memcg-cgroup2 (memcg-cgroup2.sh): both memcg scripts again in a
# cgroup2 virtual machine (tools/cgroup2-vm), where the host has v1 only;
# alone, as they are, so that the machine's emulated CPUs get the host's.
list(APPEND fault_serial memcg-cgroup2)
list(APPEND fault_timeouts memcg-cgroup2=900)
