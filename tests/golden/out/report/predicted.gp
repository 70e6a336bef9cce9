# Rendered by wakebench report; run from this folder: gnuplot predicted.gp
# Writes predicted.png and predicted.svg from predicted.dat.
if (strstrt(GPVAL_TERMINALS, " pngcairo ") > 0) {
  set terminal pngcairo size 1100,420 noenhanced font "sans,10"
} else {
  set terminal png size 1100,420 noenhanced
}
set output 'predicted.png'
set datafile missing 'NaN'
set title 'Predicted (each policy, costed with the pinned RTT) vs measured RTT'
set xlabel 'median round-trip time (ns, log scale)'
set ylabel 'kernel-placed case'
set logscale x
set grid xtics ytics
set key outside right top
set xtics ('1000' 1000, '2000' 2000, '5000' 5000, '10000' 10000)
set yrange [2.5:-0.5]
set ytics ('pipe/processes/kernel' 0, 'pipe/threads/kernel:0,1' 1, 'futex/threads/kernel' 2)
plot for [col=2:7] 'predicted.dat' using col:($0 + (col - 4) * 0.07) with points pt (col % 6 + 4) ps 1.6 lw 2 title columnheader(col), \
     'predicted.dat' using 8:0 with points pt 13 ps 2.4 lc rgb 'black' title columnheader(8)
set terminal svg size 1100,420 noenhanced font "sans,10"
set output 'predicted.svg'
replot
unset output
