#!/usr/bin/env bash
# Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ from
# small valid examples of each input (the examples of docs/trace-formats.md
# and the modules' docs). Generated, not committed. Trace targets read one
# options byte first (dedupsim_fuzz::options), trace_fiu one more byte that
# picks FIU or FIU homes, trace_detect one byte that picks the file name.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf corpus && mkdir -p corpus

# seed TARGET NAME PREFIX-BYTES(printf escapes) TEXT
seed() {
  mkdir -p "corpus/$1"
  { printf "$3"; printf '%s' "$4"; } > "corpus/$1/$2"
}

md5a=d6c75ba46e82326fefa545b57a12e221
md5b=34287a8bdde282abe94eebd707fe021f
homes=$(printf 'ab%.0s' $(seq 128))
msr=$'128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295600000,hm,1,Read,4096,4096,100\n128166385295700000,hm,0,Write,9056014336,8192,2833\n'
fiu=$'89966522969723 4270 rpc.mountd 18579576 8 W 6 0 '"$md5a"$'\n89966522969999 4270 rpc.mountd 18579584 8 W 6 0 '"$md5b"$'\n89966523000000 4270 cat 18579576 8 R 6 0\n'
fiuh=$'7775 2552 kjournald 160806224 8 W 6 0 '"$homes"$'\n7776 2552 kjournald 160806224 8 R 6 0\n'
umass=$'0,303567,3584,W,0.000000\n1,55590,3072,w,0.000000\n0,303574,3584,R,0.026214,x\n0,20941264,8192,W,0.551706,Alpha/NT\n'
systor=$'Timestamp,Response,IOType,LUN,Offset,Size\n1455591804.310701000,0.006475000,R,0,203468398592,32768\n1455591804.410701000,0.000475000,W,1,4096,8192\n'
tencent=$'Timestamp,Offset,Size,IOType,VolumeID\n1538323200,0,8,1,1063\n1538323201,16,16,0,1063\n1538323201,8,8,1,7\n'
lcs=$'version,time,op,size,lbn\n1,5633898368802,42,512,42932745\n1,5633898368900,0x28,6656,40409911\n1,5633898369000,0x2a,4096,8\n'
blk=$'  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]\n  8,0    3        2     0.000004170   697  M   W 223498 + 8 [kjournald]\n  8,0    3        3     0.000036306   697  D  WS 223490 + 16 [kjournald]\n  8,0    0        1     0.000100000     0  R  WS 223490 + 16 [0]\n  8,0    0        2     0.000200000     0  D  WS 223490 + 16 [swapper/0]\n  8,16   2        1     0.010000000  4102  D   D 5000 + 2048 [fstrim]\n  8,0    1        1     0.003955140     0  C  WS 223490 + 16 [0]\nCPU0 (8,0):\n Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB\nTotal (8,0):\nEvents (8,0): 7 entries\n'
iolog=$'fio version 3 iolog\n0 /dev/sdb add\n1 /dev/sdc add\n2 /dev/sdb open\n872 /dev/sdb write 0 16384\n881 /dev/sdc read 4096 4096\n900 /dev/sdb trim 8192 8192\n901 /dev/sdb sync 0 0\n950 /dev/sdb close\n'
iolog2=$'fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdb wait 20 0\n/dev/sdb read 0 4096\n/dev/sdb close\n'
fiolog=$'1, 183, 0, 4096, 1736704, 0\n1, 95, 1, 8192, 8192, 0\n4, 80, 2, 4096, 4096, 0\n'
csvt=$'time=1,op=3,offset=4,size=5,op-read=R,op-write=W,time-unit=us,offset-unit=sector,delimiter=tab,header=true\nts\tdev\top\tlba\tbytes\n100\tsda\tR\t8\t4096\n250.5\tsda\tW\t16\t8192\n'
disksim=$'0 0 303567 7 0\n26214000 0 303574 7 1\n26215000 1 8 64 0\n'
native=$'# dedupsim-trace v1\n# time_ns op offset_bytes size_bytes [volume [content]]\n0 W 0 8192 0 3f4fc2833a17fd2a3dacad7c0e8ca8ad,7\n1500 R 4096 4096\n2000 T 0 8192 1\n2500 W 4096 4096 0 7\n3000 W 100 5000 2 -\n3500 W 8192 4096 0 - a:4096\n4000 W 0 4096 0 9 o\n'

seed trace_msr a '\000' "$msr"
seed trace_msr b '\010' "$msr"$'garbage,line\n'
seed trace_fiu a '\000\000' "$fiu"
seed trace_fiu b '\000\001' "$fiuh"
seed trace_umass a '\000' "$umass"
seed trace_systor a '\000' "$systor"
seed trace_tencent a '\000' "$tencent"
seed trace_libcachesim a '\000' "$lcs"
seed trace_blkparse a '\000\000' "$blk"
seed trace_blkparse b '\000\001' "$blk"
seed trace_fio a '\000\000' "$iolog"
seed trace_fio b '\000\000' "$iolog2"
seed trace_fio c '\000\002' "$fiolog"
seed trace_csv a '\000' "$csvt"
seed trace_ssdsim a '\000' "$disksim"
seed trace_mqsim a '\000' "$disksim"
seed trace_native a '\000' "$native"
seed trace_native b '\001' "$native"
i=0
for t in "$msr" "$fiu" "$fiuh" "$umass" "$systor" "$tencent" "$lcs" "$disksim" "$native" "$blk" "$iolog" "$fiolog"; do
  seed trace_detect "s$i" '\000\000' "$t"
  seed trace_detect "a$i" '\001\000' "$t"
  i=$((i + 1))
done
mkdir -p corpus/trace_decompress
i=0
for t in "$msr" "$fiu" "$native" "$disksim"; do
  { printf '\000'; printf '%s' "$t"; } > "corpus/trace_decompress/plain$i"
  { printf '\000'; printf '%s' "$t" | gzip -c; } > "corpus/trace_decompress/gz$i"
  if command -v zstd > /dev/null; then
    { printf '\000'; printf '%s' "$t" | zstd -q -c; } > "corpus/trace_decompress/zst$i"
  fi
  i=$((i + 1))
done

seed synth a '' 'requests=1M,read=0.5,size=inv:16,seq=0.3,hot=0.4:5GiB,footprint=50GiB,iat=exp:100us'
seed synth b '' 'benchmark,requests=200k,size=uni:1-8,iat=fixed:1ms'
seed synth c '' 'small,name=x,size=list:1:3/4:1/16:0.5,page=8192,seed=7,read=30%'
seed synth d '' 'requests=1000,size=fixed:4,footprint=1GiB,hot=0:0'

seed content a '' 'unique'
seed content b '' 'zipf'
seed content c '' 'zipf:a=0.2,n=0.5'
seed content d '' 'zipf:a=0.2,dedup=0.5,copy=0.1'
seed content e '' 'zipf:a=1.5,n=2'

mkdir -p corpus/config
for p in ../presets/*.toml; do
  cp "$p" "corpus/config/$(basename "$p")"
done
seed config set '' $'base = "tiny"\n[geometry]\nchannels = 4\n'
ssdsim_params=$'channel number = 2;\nchip number = 4;\nchip number[0] = 2;\nchip number[1] = 2;\ndie number = 1;\nplane number = 2;\nblock number = 64;\npage number = 32;\nsubpage page = 8;\nsubpage capacity = 512;\nt_PROG = 200000;\nt_BERS = 1500000;\nt_R = 20000;\nt_WC = 25;\nt_RC = 25;\noverprovide=0.2;\ngc hard threshold=0.125;\nallocation=1;\nstatic_allocation=2;\nadvanced command=2;\naged=1;\naged ratio=0.5;\n'
seed config_import ssdsim '\001' "$ssdsim_params"
seed config_import detect '\000' "$ssdsim_params"
# the peers' FAD Table I configs, when ../shared is beside the repository
for f in ../../shared/peers/config/ssdsim-fad-table1.parameters ../../shared/peers/config/mqsim-fad-table1.xml; do
  [ -f "$f" ] && { printf '\000'; cat "$f"; } > "corpus/config_import/${f##*/}"
done
printf 'base = "tiny"\n\0geometry.channels=8\0policy.fad.rho=0.2\0timing.erase=3ms\0replay.mode=closed-loop' > corpus/config/overrides
printf 'name = "x"\n[gc]\n\0over_provisioning=20%%\0seed=7' > corpus/config/overrides2

echo "seed corpora:"
for d in corpus/*/; do printf '  %-20s %s files\n' "$(basename "$d")" "$(ls "$d" | wc -l)"; done
